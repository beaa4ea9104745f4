# Slim, non-root image of the bot. The embedded SQLite database lives on the /app/data volume.
FROM python:3.11-slim AS runtime

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DATABASE_URL=sqlite+aiosqlite:////app/data/bot.sqlite3

WORKDIR /app
RUN useradd --create-home --uid 10001 bot

COPY pyproject.toml README.md alembic.ini ./
COPY core ./core
COPY bot ./bot
COPY tgsandbox ./tgsandbox
COPY migrations ./migrations
# `python -m bot` imports these sources from /app (not the installed copy), and PYTHONDONTWRITEBYTECODE
# keeps it from caching their bytecode: compiled here once, not at every start (~0.1 s of each).
RUN pip install . && python -m compileall -q core bot tgsandbox migrations \
    && mkdir -p /app/data && chown bot:bot /app/data

USER bot
VOLUME ["/app/data"]
EXPOSE 8080

# Long polling by default; `python -m bot webhook` for the scale-out path (see README).
CMD ["python", "-m", "bot"]

## Greeting and the task question

greeting = 👋 I size GPU memory for AI models: will it fit, on which card, and where to rent it.
ask-task = <b>What do you want to do?</b>
task-inference = 💬 Run an LLM
task-finetune = 🎯 Fine-tune an LLM
task-pretrain = 🏗 Train from scratch
task-image = 🖼 Generate images
task-video = 🎬 Generate video
task-other = 🧩 Something else
task-other-note =
    3D rendering, simulation and other workloads are sized separately, with our engineers.
    Leave a request and we will pick a server for you.

## Steps

ask-model = <b>Which model?</b>
    Pick one below, or type a name, a Hugging Face id or a size (<code>13B</code>).
ask-method = <b>How do you want to train?</b>
ask-precision = <b>Which precision for the weights?</b>
ask-context_length = <b>Context length</b> per request (tokens)? Or type one: <code>32k</code>, <code>8192</code>.
ask-concurrency = <b>How many users at the same time?</b> Or type a number.
ask-batch_size = <b>Micro-batch size</b> per GPU? Or type a number.
ask-seq_len = <b>Sequence length</b> of your training samples (tokens)? Or type one: <code>4k</code>.
ask-resolution = <b>Resolution</b>? Or type one: <code>1024x768</code>.
ask-images = <b>How many images at once</b> (batch)?
ask-frames = <b>How many frames</b> per clip?
choose-one = Several models match, which one?


field-precision = { $value }
field-method = { $value }
field-context_length = context { $value }
field-concurrency = { $value ->
    [one] { $value } user
   *[other] { $value } users
}
field-batch_size = batch { $value }
field-seq_len = seq { $value }
field-resolution = { $value }
field-images = { $value ->
    [one] { $value } image
   *[other] { $value } images
}
field-frames = { $value ->
    [one] { $value } frame
   *[other] { $value } frames
}

## Buttons

btn-back = ‹ Back
btn-restart = ↺ Start over
btn-prev-page = ‹ Previous
btn-next-page = More ›
btn-typical = Typical
btn-contact = ✉️ Contact us
btn-rent = 🚀 Rent { $count }× { $gpu }
btn-change-precision = Change precision
btn-change-context_length = Change context
btn-change-seq_len = Change sequence length
btn-change-resolution = Change resolution
btn-change-method = Change method
btn-details = 📋 More
btn-open-bot = 🤖 Full answer in the bot

## The quote form (bot/handlers/leads.py) and the sales chat's card (bot/leads.py)
btn-quote = ✉️ Request a quote
cmd-contact = Request a quote from a manager
lead-ask-contact = ✉️ <b>Request a quote</b>
    { $config }

    How should our manager reach you? Press a button below or type an e-mail or a phone number. /cancel to stop.
lead-config = Configuration: { $config }
lead-no-config = No configuration yet: the manager will ask about your task.
btn-lead-username = ✈️ Message me on Telegram (@{ $username })
btn-lead-phone = 📱 Share my phone number
lead-bad-contact = That does not look like an e-mail or a phone number. Type e.g. <code>name@example.com</code> or <code>+44 20 7946 0958</code>, or press a button below.
lead-foreign-contact = That is someone else's contact. Press “📱 Share my phone number” or type your own e-mail or phone.
lead-ask-comment = A comment for the manager? Dates or budget, for instance. Or press “No comment”.
btn-lead-skip = No comment
lead-what-contact = • Contact: { $contact }
lead-what-comment = • Comment: { $comment }
lead-what-config = • Configuration: { $config }
lead-what-answer = • The bot's answer: { $answer }
lead-what-none = • Configuration: none chosen
lead-cancelled = Quote request cancelled.
lead-kind-username = Telegram
lead-kind-phone = Phone
lead-kind-email = E-mail
lead-card-title = 📩 <b>New lead #{ $id }</b>
lead-card-who = 👤 { $name } · { $username } · { $link } · language { $language } · source { $source }
lead-card-contact = 📞 { $kind }: { $contact }
lead-card-comment = 💬 { $comment }
lead-card-config = ⚙️ { $config }
lead-card-answer = { $answer }
lead-card-recommended = 🚀 Recommended: { $config }, { $price } (offer { $offer })
lead-card-no-config = ⚙️ No configuration (asked before any estimate)
lead-card-when = 🕒 { $when }


## Hints for unexpected input

hint-model = I did not recognise that model. Type a name (<code>llama 3.1 8b</code>), a Hugging Face id (<code>org/model</code>) or a size (<code>13B</code>), or pick a button.
hint-method = Pick a method with the buttons: LoRA, QLoRA or full.
hint-precision = Pick a precision with the buttons, or type one: <code>bf16</code>, <code>int8</code>, <code>int4</code>.
hint-context_length = Type a context length like <code>32k</code> or <code>8192</code>, or pick a button.
hint-concurrency = Type a number of users, like <code>8</code>, or pick a button.
hint-batch_size = Type a batch size, like <code>4</code>, or pick a button.
hint-seq_len = Type a sequence length like <code>4k</code> or <code>2048</code>, or pick a button.
hint-resolution = Type a resolution like <code>1024x1024</code>, or pick a button.
hint-images = Type a number of images, like <code>4</code>, or pick a button.
hint-frames = Type a number of frames, like <code>81</code>, or pick a button.
hint-idle = Send me a question in words, like <code>llama 3 70b int4 32k</code>, or /start for a guided dialog.
stale-button = This button is from an old message. Use /new to start again.

## The result

result-part = • { $name }: { $size }

error-estimate = I could not size this: { $reason }
    Go back and change an answer, or start over.
error-generic = Something went wrong on my side. Please try again, or /new to start over.
hf-not-found = I found no model <b>{ $model }</b> on Hugging Face (or it is private or gated). Check the name, e.g. <code>Qwen/Qwen3-8B</code>, or give its size: <code>8B</code>.
hf-unavailable = Hugging Face did not answer within { $seconds } s, so I could not read <b>{ $model }</b>. Try again in a minute, or give the model's size: <code>8B</code>.
hf-unsupported = <b>{ $model }</b> is on Hugging Face, but its config.json is not a language model's that I can size. Give its size instead (<code>8B</code>): I will size a typical architecture.
quick-not-understood = { $reason }
    Try something like <code>llama 3 70b int4 32k</code>, or /start for a guided dialog.

## Inline mode: @bot and a question in any chat. Titles and descriptions are plain text (no HTML).

inline-no-offer = How to cut the memory: in the full answer in the bot.
inline-help-title = ❓ How to ask: model, precision, context
inline-help-description = For example: llama 3.1 70b int4 32k · qwen3 8b 8 users · sdxl 1024 batch 4
inline-help =
    <b>GPU memory in one line</b>
    In any chat, type <code>@{ $bot }</code> and a question: <code>llama 3.1 70b int4 32k</code>, <code>qlora mistral 7b</code>, <code>sdxl 1024 batch 4</code>.
    You get the total, the breakdown and the card to rent; the full answer is in the bot.

## Commands

cancelled = Cancelled. Send a question or /start whenever you like.
help =
    <b>How to use me</b>
    /start — a guided dialog: task, model, precision, workload → memory, verdict and a server to rent
    Or just write a question: <code>llama 3 70b int4 32k</code>, <code>qlora mistral 7b</code>, <code>sdxl 1024 batch 4</code>
    /prices — rental prices · /contact — request a quote from a manager
    /new — start over · /lang — language · /about — how it is computed · /cancel — stop the dialog
about =
    <b>How the estimate is computed</b>
    Peak memory per GPU is the sum of its parts: weights at the chosen precision (true bits per weight for GGUF/AWQ/NF4), the KV cache from the model's architecture (GQA, sliding windows, MLA), activations, gradients and optimizer states for training, the text encoders and VAE decode for diffusion, plus the CUDA context and allocator reserve.
    Usable GPU memory is what the driver reports, not the number on the box. Sizes are in GB as cards are named: 1 GB = 2³⁰ bytes (an “RTX 4090 48 GB” holds exactly 48 GB; nvidia-smi and PyTorch count the same way).
    <b>Accuracy</b>: checked against { $cases } published measurements of real runs (LLM inference with transformers and vLLM, LoRA/QLoRA and full training, image and video generation): median error { NUMBER($median, minimumFractionDigits: 1, maximumFractionDigits: 1) }%, 9 in 10 within { NUMBER($p90, minimumFractionDigits: 1, maximumFractionDigits: 1) }%, and { NUMBER($stated_median, minimumFractionDigits: 1, maximumFractionDigits: 1) }% on the { $stated_cases } whose settings were stated. Simple rules of thumb (weights × 1.2, × 4 for Adam) are off by { NUMBER($rules, minimumFractionDigits: 1, maximumFractionDigits: 1) }% on the same cases ({ NUMBER($stated_rules, minimumFractionDigits: 1, maximumFractionDigits: 1) }% on the stated ones). The ± range of each answer is the 90th-percentile error of its kind of workload ({ NUMBER($range_low, minimumFractionDigits: 1, maximumFractionDigits: 1) }% to { NUMBER($range_high, minimumFractionDigits: 1, maximumFractionDigits: 1) }% over the { $classes } kinds measured), wider when a request lies outside what was measured. The table per kind is in docs/accuracy.md.
    An estimate is not a guarantee: frameworks and versions differ, so keep some headroom.
lang-choose = Choose the language:
lang-set = Language: English 🇬🇧
lang-ru = Русский
lang-en = English

cmd-start = Size a model: guided dialog
cmd-new = Start over
cmd-help = How to use the bot
cmd-lang = Language
cmd-about = How the estimate is computed
cmd-cancel = Stop the dialog
cmd-stats = Sales figures: 7, 30 days, all time
cmd-export = Users, dialogs, leads as CSV
cmd-link = Link for a source: /link name
cmd-offers = Offers in force; /offers reload

## Groups, and a flood from one user

group-private-only = I size GPU memory in a private chat: open it with the button. Here in the group, mention me with a question: <code>@{ $bot } llama 3.1 70b int4 32k</code>.
btn-open-private = 💬 Open the chat with the bot
throttled = Too many messages at once: I answer about one a second. Wait a moment, then send your question again.

## Admin commands (ADMIN_IDS only; anyone else gets the unknown-command answer)

admin-stats-7d = 📊 <b>Last 7 days</b>
admin-stats-30d = 📊 <b>Last 30 days</b>
admin-stats-all = 📊 <b>All time</b>
admin-stats-total = Users: <b>{ $users }</b> · dialogs: <b>{ $started }</b>, completed <b>{ $completed }</b>
    Leads: <b>{ $leads }</b> (not delivered yet: { $pending }, failed: { $failed }) · conversion <b>{ $conversion }</b>
admin-stats-by-source = <b>By link source</b> (users · dialogs/completed · leads · conversion)
admin-stats-by-task = <b>By task</b> (dialogs/completed · leads · conversion)
admin-stats-by-gpu = <b>By recommended GPU</b> (completed · leads · conversion)
admin-stats-row-source = • { $name }: { $users } · { $started }/{ $completed } · { $leads } · { $conversion }
admin-stats-row-task = • { $name }: { $started }/{ $completed } · { $leads } · { $conversion }
admin-stats-row-gpu = • { $name }: { $completed } · { $leads } · { $conversion }
admin-stats-no-link = (no link)
admin-stats-no-task = (before any answer)
admin-stats-no-gpu = (none fits)
admin-stats-more = • … { $count } more: see /export
admin-stats-nothing = nothing yet
admin-export-caption = <b>{ $file }</b>: { $rows } rows. UTF-8 with BOM, columns separated by «;» (opens in Excel by a double click); times in UTC.
admin-link = Link for the source <code>{ $source }</code>:
    { $link }
    Users who first came by it: <b>{ $users }</b>.
admin-link-usage = Usage: <code>/link source</code>, e.g. <code>/link habr_2025</code>. The source: 1 to 64 characters A–Z, a–z, 0–9, _ and -.
admin-link-invalid = <code>{ $source }</code> cannot be a source: 1 to 64 characters A–Z, a–z, 0–9, _ and - (Telegram's rule for start links).
admin-offers-title = <b>Offers in force</b> ({ $count }, { $file }):
admin-offers-row = • <code>{ $id }</code>: { $config }, { $price }
admin-offers-builtin = the built-in file
admin-offers-more = • … { $count } more (see the file)
admin-offers-hint = <code>/offers reload</code> re-reads OFFERS_FILE; it is checked first, a bad file keeps these.
admin-offers-no-file = OFFERS_FILE is not set: the built-in offers are in force, there is nothing to reload.
admin-offers-bad = ❌ Not reloaded, the offers in force stay:
    <code>{ $error }</code>
admin-offers-reloaded = ✅ Reloaded { $file }.
admin-offers-usage = <code>/offers</code> lists the offers in force, <code>/offers reload</code> re-reads OFFERS_FILE.

## sales: prices and the sales buttons (slice "sales")
cmd-prices = Server rental prices
btn-ask-price = 💬 Ask for the price
## dialog: refusals at a step (bot/handlers/wizard.py, bot/dialog.py)
step-wrong-kind = { $model } is { $kind ->
    [image] an image model
    [video] a video model
   *[other] a language model
}, and this step needs { $wanted ->
    [image] an image model
    [video] a video model
   *[other] a language model (LLM)
}. Pick a button below or type another name.
step-size-not-allowed = A size (<code>13B</code>) describes a language model, and this step needs { $kind ->
    [image] an image model
   *[other] a video model
}: pick a button below or type its name.
step-out-of-range = I cannot size “{ $what }”: from { $low } to { $high } are allowed. Change the number.
ask-model-generation = <b>Which model?</b>
    Pick one below or type its name.
hint-model-generation = I did not recognise that model. Type its name (<code>flux dev</code>, <code>wan 2.1 14b</code>) or pick a button.
## understand (issue 25): replies to text that asks no sizing question (bot/asides.py)
understand-chit-chat = 👋 I size how much GPU memory a model needs and which server to rent for it. Name a model and a task, e.g. <code>llama 3.1 8b int4 on a 4090 48gb</code> — or /start for a step-by-step dialog.
understand-off-topic-render = We size servers for 3D rendering and simulation separately: this bot sizes ML models only. Leave a request and a manager will suggest a configuration.
understand-off-topic-hardware = We rent GPU servers out and do not sell hardware. For a long rental or a special configuration, leave a request and a manager will answer.
understand-off-topic-billing = A manager handles payment, contracts and documents. Leave a request and they will contact you.
understand-unsized-speech = I do not size this text-to-speech model yet (only Bark, XTTS-v2 and F5-TTS, and Whisper for speech recognition). Leave a request and a manager will pick a server, or write /contact.
## leads slice: honest lead status, follow-up notes, undelivered leads (bot/handlers/leads.py, bot/outbox.py, /leads)
lead-saved = 📝 Request #{ $id } saved; we will pass it to our manager.

    Your request:
    { $what }
lead-accepted = ✅ Request #{ $id } accepted: our manager will contact you.

    Your request:
    { $what }
lead-already-saved = 📝 This request is saved already (#{ $id }), no need to repeat it: we will pass it to our manager.

    Your request:
    { $what }
lead-already-accepted = ✅ This request was accepted already (#{ $id }), no need to repeat it: our manager will contact you.

    Your request:
    { $what }
lead-joined = 📝 Added to your request #{ $id }: our manager will see it all together and contact you. At most { $limit } new requests an hour; the rest joins the last one.

    Added:
    { $what }
lead-card-note = ➕ { $when }, follow-up: { $what }
lead-admin-alert = ⚠️ <b>Leads do not reach the sales chat</b>: { $count } ({ $leads }).
    Error: <code>{ $error }</code>
    The bot keeps trying for up to { $days } days after each lead. /leads lists them, /leads resend sends them again.
cmd-leads = Undelivered leads
admin-leads-title = <b>Undelivered leads: { $count }</b>
admin-leads-row = • #{ $id } of { $created } · { $status } · attempts: { $attempts } · { $error }
admin-leads-more = • … { $count } more
admin-leads-status-pending = queued
admin-leads-status-updated = follow-up queued
admin-leads-status-failed = not delivered
admin-leads-hint = <code>/leads resend</code> sends them all again now.
admin-leads-none = ✅ Every lead was delivered.
admin-leads-resent = 🔁 Queued again: { $count }. Sending now; /leads shows what does not arrive.
admin-leads-no-chat = SALES_CHAT_ID is not set: leads are kept in the database, there is nowhere to send them.
admin-leads-usage = <code>/leads</code> lists undelivered leads, <code>/leads resend</code> sends them again.
## slice "hub": Hugging Face ids the Hub cannot have, configs refused (bot.hf_models, core.model.checks)
hf-not-a-hub-id = <b>{ $model }</b> cannot be a Hugging Face model: its names use only Latin letters, digits, «-», «_» and «.», e.g. <code>Qwen/Qwen3-8B</code>. Check the name, or give the model's size: <code>8B</code>.
hf-refused-range = I won't size <b>{ $model }</b>: its config.json says <code>{ $field } = { $value }</code>, and no model has that (allowed: { $least } to { $most }). Give the model's size instead: <code>8B</code>.
hf-refused-inconsistent = I won't size <b>{ $model }</b>: its config.json (<code>{ $field }</code>) does not agree with its parameter count ({ $params }). Give the model's size instead: <code>8B</code>.
hf-refused-malformed = I won't size <b>{ $model }</b>: <code>{ $field }</code> on Hugging Face is not a config I can read (not a number, nested too deep or too large). Give the model's size instead: <code>8B</code>.
## slice "offers" (issue 19, item 9): the answer pictures in /stats
admin-stats-pictures = <b>Answer pictures</b> since this bot process started: sent <b>{ $sent }</b> · skipped under load <b>{ $skipped }</b> · failed { $failed }
## slice "crm" (issue 23, item 1): the CRM push
crm-title-plain = Request #{ $id } from Telegram
crm-source = Telegram bot, source: { $source }
crm-earlier-leads = Returning customer, earlier leads: { $ids }
crm-admin-alert = ⚠️ <b>Leads are not reaching the CRM</b> ({ $crm }): { $count } ({ $leads }).
    Error: <code>{ $error }</code>
    The bot keeps retrying for up to { $days } days from each request; the sales chat gets them as usual.

## avail (issue 23): offer availability set by admins
admin-offers-sold_out = ⛔ taken right now
admin-offers-on_request = on request
admin-offers-switch-hint = <code>/offers off id</code>: the server is taken (never recommended), <code>/offers on id</code>: free, <code>/offers request id</code>: on request only. Kept in the database: every replica sees it, and after a restart.
admin-offers-unknown = No such offers: { $ids }. There are: { $known }
admin-offers-switched = ✅ { $ids }: { $availability ->
    [sold_out] taken right now, not recommended in answers
    [on_request] on request only
   *[available] free
}.
btn-reserve = 📅 Reserve
btn-hold-hours = As soon as possible, for a few hours
btn-hold-months = As soon as possible, for a month or longer
reserve-ask-hold = 📅 <b>Reservation: { $config }</b> (offer <code>{ $offer }</code>)
    When and for how long? Tap a button or type the dates and the term, e.g. "10 to 20 December" or "from Monday for 3 months". /cancel to cancel.
lead-what-reservation = • Reservation: { $offer }, { $hold }
lead-card-reservation = 📅 <b>Reservation</b> of offer { $offer }: { $hold }
## slice "currency" (issue 23, items 6 and 7): the currency of prices, rent or buy, personal links
cmd-currency = Currency of prices: /currency KZT
cmd-ref = Your link to invite colleagues
currency-help-ref = /currency — currency of prices · /ref — your link to invite colleagues: { $link }
currency-ref =
    Your link: { $link }
    Whoever arrives through it is counted as brought by you. Arrived so far: { $users }.
currency-current = Prices are shown in { $currency } where the offer has a price in it, otherwise in the offer's main currency. To change: <code>/currency KZT</code>. Available: { $choices }.
currency-unknown = We have no prices in “{ $currency }”. Available: { $choices } — e.g. <code>/currency KZT</code>.
currency-set = ✅ Prices are now in { $currency } where the offer has a price in it; the rest in its main currency, never converted.
currency-stats-referrers = <b>Who brought whom</b> (personal links, all time: arrived · leads)
currency-stats-referrer = • { $name }: { $users } · { $leads }
currency-rentbuy-title = <b>Buy or rent { $config }</b>
currency-rentbuy-workload = Workload: { $hours } h a month.
currency-rentbuy-around-the-clock = Workload: around the clock, { $hours } h a month (write, e.g., “rent or buy for 200 hours a month”).
currency-rentbuy-rent = Rent: { NUMBER($amount, maximumFractionDigits: 0) } { $currency } a month.
currency-rentbuy-buy = Buy: { NUMBER($price, maximumFractionDigits: 0) } { $currency } up front, plus { NUMBER($running, maximumFractionDigits: 0) } { $currency } a month for power and hosting.
currency-rentbuy-break-even = Buying breaks even after { NUMBER($months, maximumFractionDigits: 1) } months; until then renting costs less, and an idle server is not on you.
currency-rentbuy-never = At this workload renting costs less than even running your own server: buying never pays off.
currency-rentbuy-hours = A month has at most { $most } hours: write how many hours a month you need the server, e.g. “for 200 hours a month”.
currency-rentbuy-which = Which server should I compare? Size your model first (/start) or name the cards: “rent or buy 8×H100”.
currency-rentbuy-no-file = I have no purchase prices for { $config }, so I cannot compare it with renting. Leave a request and a manager will price the rent for your term.
currency-rentbuy-no-row = I have no purchase price for { $config } in this currency, so I cannot compare it with renting. Leave a request and a manager will price it.
## slice "claims" (issue 23, items 2 and 5): "Беру" on the sales card, reminders, qualification, /stats
btn-lead-claim = ✋ Mine
lead-card-claimed = ✋ Taken by <b>{ $name }</b>, { $at } ({ $minutes } min after the request)
lead-card-need = 🗓 When: { $when } · for: { $duration }
lead-claim-won = Request #{ $id } is yours.
lead-claim-mine = Request #{ $id } is yours already.
lead-claim-taken = Request #{ $id } was taken by { $name } at { $at }.
lead-reminder = ⏰ Request #{ $id } has waited { $minutes } min — nobody pressed "Mine".
lead-escalation = ⏰ <b>Requests nobody took</b> for over { $minutes } min: { $count } ({ $leads }). Nobody in the sales chat pressed "Mine".
need-ask-when = To help the manager prepare: when do you need the server? (optional, your request is saved)
need-ask-for = For how long?
need-thanks = Thank you, the manager will see this with your request.
btn-need-when-today = Today
btn-need-when-week = This week
btn-need-when-later = Later
btn-need-for-hours = Hours
btn-need-for-weeks = Weeks
btn-need-for-months = Months
btn-need-skip = Skip
need-when-today = today
need-when-week = this week
need-when-later = later
need-for-hours = hours
need-for-weeks = weeks
need-for-months = months
admin-stats-claims-by-source = <b>Requests taken, by link source</b> (requests · taken · median min to "Mine" · conversion)
admin-stats-claims-row = ◦ { $name }: { $leads } · { $claimed } · { $median } · { $conversion }
admin-stats-weeks = 📅 <b>By week</b>, the last { $weeks } (completed · requests · taken · median min to "Mine" · conversion)
admin-stats-week-row = • { $week }: { $completed } · { $leads } · { $claimed } · { $median } · { $conversion }
## slice "polish" (issue 25): a card named without its memory, switched with one tap
btn-card-switch = 🔁 On the { $gpu }

btn-launch = ⌨️ Команда запуска

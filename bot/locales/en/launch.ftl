btn-launch = ⌨️ Launch command

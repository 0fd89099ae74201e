"""The browser clients (scoreboard, overlay, handheld, committee console): their pages,
scripts, styles, fonts and icons, written here and shipped inside the package as
``stream.web``, where the service finds them through ``importlib.resources``."""

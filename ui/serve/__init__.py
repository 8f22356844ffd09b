"""Serving the page: the launch options (theme, assets, auth, host and port checks) and the request
guards in front of Gradio. The entry points that use them are in ui.app."""

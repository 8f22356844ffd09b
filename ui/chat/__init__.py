"""The Ask tab: its layout (tab), handlers, the engine loop that streams an answer (answer_stream), what
one browser session holds (session) and the chat column and sources panel as HTML (render, sources_html,
answer_text). Imports nothing from ui.find: what both tabs share lives in ui.html and the ui root."""

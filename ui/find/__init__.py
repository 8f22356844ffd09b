"""The Find-papers tab: its layout (tab), handlers, and the lister's results as HTML and exports (papers).
Imports nothing from ui.chat: what both tabs share lives in ui.html and the ui root."""

"""HTML helpers both tabs and the page share: escaping, safe URLs, highlights and the links that ask again
(safe), and the status banner (status)."""

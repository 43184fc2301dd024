"""The Memory Explorer: static HTML, CSS and JavaScript served from the package, talking only to /api."""

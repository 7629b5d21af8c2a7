"""The vault as files: walking it, atomic writes, slugs, frontmatter, Markdown parsing, live sync.

May import: only itself (the lowest package of the indexer)."""

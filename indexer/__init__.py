"""The vault: slugs, Markdown parsing, page tables, keyword and vector search, sync."""

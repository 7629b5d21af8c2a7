"""The vault as files: walking it, atomic writes, slugs, frontmatter, Markdown parsing, live sync,
and the pass both vault indexers run over them (indexing_pass, problem_rows).

May import: only itself (the lowest package of the indexer)."""

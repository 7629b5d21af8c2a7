"""A page titled by the query comes first, in either number (indexer/pages/search.py, the exact arm):
`hotkey` finds the page titled Hotkeys before long pages that mention the word or carry it as a
heading."""

from conftest import call
from indexer_fixtures import open_index, write  # noqa: F401
from brain.indexer.vault.visibility import Viewer

LONG = "Press the hotkey you set, then press the hotkey again to undo. " * 30


def test_a_singular_query_finds_the_page_titled_in_the_plural_first(vault, open_index, local):
    write(vault, "help/Glossary.md", "# Glossary\n## Hotkey\nA key combination. " + LONG)
    write(vault, "help/Settings.md", "# Settings\n## Hotkeys\nChange any hotkey here. " + LONG)
    write(vault, "help/Command line.md", "# Command line\nEvery hotkey has a command. " + LONG)
    write(vault, "help/Hotkeys.md", "Assign keys to commands you use often.\n")
    write(vault, "help/Themes.md", "Change how the app looks.\n")
    write(vault, "help/Categories.md", "Group notes.\n")
    for i in range(8):   # other pages, so that how rare a word is means something
        write(vault, f"help/other-{i}.md", f"# Other {i}\nA note about lunch, budgets and the weather, number {i}.\n")
    e = open_index(vault)
    for query, slug in (("hotkey", "help/hotkeys"), ("Hotkeys", "help/hotkeys"), ("theme", "help/themes"),
                        ("category", "help/categories")):
        results, _ = e.pages.search(query, 5, Viewer.owner())
        assert results[0]["slug"] == slug, (query, [r["slug"] for r in results])
        assert results[0]["evidence"] == "exact_title_match"
    # the pages that carry it as a heading still follow, before those that only mention it
    results, _ = e.pages.search("hotkey", 5, Viewer.owner())
    order = [r["slug"] for r in results]
    assert order[0] == "help/hotkeys" and set(order[1:3]) == {"help/glossary", "help/settings"}, order
    body, _ = call(e, "recall", {"query": "hotkey"}, local)
    assert body["results"][0]["title"] == "Hotkeys"


def test_a_prefixed_hyphenated_title_beats_long_pages_that_mention_its_word(vault, open_index):
    # command pages are titled "tool-<name>": the query names the command without the prefix
    mention = "Installing fills the cache; the cache folder grows, and a clean cache is rebuilt. " * 25
    write(vault, "commands/tool-cache.md", "---\ntitle: tool-cache\ndescription: Manipulates the packages cache\n---\n"
          "## Synopsis\ntool cache add\ntool cache clean\n")
    write(vault, "commands/tool-install.md", "---\ntitle: tool-install\n---\n## Description\n" + mention)
    write(vault, "using/config.md", "---\ntitle: config\n---\n## Options\n" + mention)
    for i in range(8):
        write(vault, f"commands/tool-other-{i}.md", f"---\ntitle: tool-other-{i}\n---\nDoes thing {i}.\n")
    e = open_index(vault)
    for query in ("cache", "clear the cache", "caches", "manipulate the cache folder"):
        results, _ = e.pages.search(query, 5, Viewer.owner())
        assert results[0]["slug"] == "commands/tool-cache", (query, [r["slug"] for r in results])

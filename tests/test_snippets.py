"""The passage a page hit shows (indexer/page_policy/passage.py): the lines that answer the query,
readable as they stand — a table row under its header, a code block inside its fences."""

from brain.indexer.vault.visibility import Viewer
from indexer_fixtures import open_index, write  # noqa: F401

FILLER = "\n\n".join(f"Paragraph {i} says nothing about the question at hand, on purpose." for i in range(4))


def _others(vault) -> None:
    # other pages that talk about deleting, so that "restore" is the rare, telling word
    for i in range(6):
        write(vault, f"help/other-{i}.md", f"# Other {i}\nYou can delete a file or delete a folder, number {i}.\n")


def test_a_question_about_restoring_shows_the_restore_passage(vault, open_index):
    _others(vault)
    write(vault, "help/Trash.md", "# Trash\n" + FILLER + "\n\n"
          "To delete a note, select it and press Delete; deleted notes go to the trash.\n\n"
          "To restore a note, open the trash, select it and choose Restore.\n\n" + FILLER + "\n")
    e = open_index(vault)
    results, _ = e.pages.search("how do I restore a deleted note", 5, Viewer.owner())
    hit = next(r for r in results if r["slug"] == "help/trash")
    assert hit["chunk"].startswith("To restore a note"), hit["chunk"]


def test_a_table_row_shows_under_its_header(vault, open_index):
    rows = "\n".join(f"| npm thing-{i} | does thing number {i} to the packages |" for i in range(12))
    write(vault, "help/Commands.md", "# Commands\n| Command | What it does |\n|---|---|\n" + rows +
          "\n| npm shrink | squeezes the lockfile down |\n")
    e = open_index(vault)
    results, _ = e.pages.search("squeeze the lockfile", 5, Viewer.owner())
    lines = results[0]["chunk"].splitlines()
    assert lines[0] == "| Command | What it does |" and lines[1] == "|---|---|", lines
    assert "| npm shrink | squeezes the lockfile down |" in lines


def test_a_match_inside_code_shows_the_whole_fenced_block(vault, open_index):
    write(vault, "help/Deploy.md", "# Deploy\n" + FILLER + "\n\n```bash\nmake build\n\nrsync dist/ prod:/srv/site\n```\n\n"
          + FILLER + "\n")
    e = open_index(vault)
    results, _ = e.pages.search("rsync", 5, Viewer.owner())
    assert results[0]["chunk"] == "```bash\nmake build\n\nrsync dist/ prod:/srv/site\n```"


def test_a_list_passage_keeps_its_bullets_and_a_page_card_is_not_the_passage(vault, open_index):
    write(vault, "help/Sync.md", "---\ndescription: Keep notes the same on every device\n---\n# Sync\n"
          + FILLER + "\n\n- Turn sync on in Settings.\n- Pick the vault to keep in step across devices.\n\n" + FILLER)
    e = open_index(vault)
    results, _ = e.pages.search("keep the vault in step", 5, Viewer.owner())
    assert results[0]["slug"] == "help/sync"
    assert results[0]["chunk"].startswith("- Turn sync on"), results[0]["chunk"]

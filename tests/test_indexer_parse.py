"""Parsing one page: frontmatter forms, title/type/lead, links, timeline, chunks."""

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.indexer.vault.chunks import MAX_CHARS, split_chunks
from brain.indexer.vault.frontmatter import split_frontmatter
from brain.indexer.vault.parse import parse_page
from brain.indexer.vault.timeline import extract_entries, split_timeline
from brain.indexer.vault.wikilinks import body_links, frontmatter_links

# -- frontmatter ------------------------------------------------------------


def test_frontmatter_aliases_as_list_and_as_comma_string():
    a = parse_page("people/a.md", "---\naliases: [AE, \"Alice E.\"]\n---\nx")
    b = parse_page("people/b.md", "---\naliases: AE, Alice E.\n---\nx")
    c = parse_page("people/c.md", "---\naliases:\n  - '  AE '\n  - \"(Alice   E.)\"\n---\nx")
    # aliases keep the case the page writes them in; quotes, brackets and extra spaces go
    assert a.aliases == b.aliases == ["AE", "Alice E."]
    assert c.aliases == ["AE", "Alice E."]
    d = parse_page("people/d.md", "---\naliases: [iPadOS, ipados, IPADOS, Mac]\n---\nx")
    assert d.aliases == ["iPadOS", "Mac"]   # one per lookup key: the first spelling wins


def test_frontmatter_tags_forms_and_inline_tags():
    p = parse_page("n.md", "---\ntags: '#work, Ideas'\n---\nSome #project/alpha text, not a#tag, not #123.\n")
    assert p.tags == ["work", "ideas", "project/alpha"]
    q = parse_page("n.md", "---\ntags:\n  - one\n  - two three\n---\n")
    assert q.tags == ["one", "two", "three"]


def test_frontmatter_title_type_visibility_summary():
    p = parse_page("notes/x.md", "---\ntitle: The Real Title\ntype: Person\nvisibility: Private\n"
                                 "summary: |\n  one\n  two\n---\n# Other H1\n")
    assert (p.title, p.type, p.visibility, p.summary) == ("The Real Title", "person", "private", "one two")
    assert p.title_key == "the real title"


def test_malformed_yaml_keeps_the_body_and_reports_the_line():
    p = parse_page("people/bad.md", "---\ntitle: [unclosed\naliases: x\n---\n# Heading Title\nBody text here.\n")
    assert p.frontmatter == {}
    assert "line" in p.frontmatter_error
    assert p.title == "Heading Title"
    assert p.lead == "Body text here."
    assert any("Body text here." in c.text for c in p.chunks)


def test_frontmatter_that_is_not_a_mapping_is_an_error_and_dates_become_strings():
    assert split_frontmatter("---\n- a\n- b\n---\nbody").error
    fm = split_frontmatter("---\nborn: 2020-01-02\n---\nbody")
    assert fm.data == {"born": "2020-01-02"} and fm.body == "body"


def test_no_closing_fence_means_no_frontmatter():
    fm = split_frontmatter("---\nnot yaml, a rule\n\ntext")
    assert fm.data == {} and fm.error is None and fm.body.startswith("---")


# -- title, type, lead --------------------------------------------------------


def test_title_falls_back_from_h1_outside_code_to_the_file_stem():
    assert parse_page("a.md", "```\n# not this\n```\n# Real One\n").title == "Real One"
    # no frontmatter title and no H1: the file name exactly as the vault shows it
    assert parse_page("people/jane_doe-smith.md", "no heading").title == "jane_doe-smith"
    assert parse_page("Obsidian for iOS and iPadOS.md", "no heading").title == "Obsidian for iOS and iPadOS"


def test_type_from_folder_then_none():
    assert parse_page("people/x.md", "").type == "person"
    assert parse_page("work/companies/x.md", "").type == "company"
    assert parse_page("projects/x.md", "").type == "project"
    assert parse_page("meetings/2024/x.md", "").type == "meeting"
    assert parse_page("notes/x.md", "").type == "note"
    assert parse_page("random/x.md", "").type is None


def test_lead_skips_headings_comments_tables_code_and_cuts_the_sentence():
    body = ("# Title\n<!-- hidden\nstill hidden -->\n| a | b |\n|---|---|\n```\ncode.\n```\n"
            "Synthetic entity for a MEMORY_VERBS conformance run. Second sentence.\n")
    assert parse_page("x.md", body).lead == "Synthetic entity for a MEMORY_VERBS conformance run."
    long = "word " * 100
    lead = parse_page("x.md", long).lead
    assert len(lead) == 160 and lead.endswith("…")


def test_lead_comes_from_above_the_timeline():
    body = "## Timeline\n- **2024-01-01** | x — y\n"
    assert parse_page("x.md", body).lead == ""


# -- links --------------------------------------------------------------------


def test_every_obsidian_link_form():
    body = ("See [[Alice Example]], [[people/bob|Bobby]], [[Carol#Early life]], ![[Dave]] and "
            "[[Erin#^block1|x]]. Also [Frank](../people/frank.md), [G](<notes/g h.md#sec>), "
            "[web](https://example.com/x.md), [pic](p.png), ![[photo.png]], [[#local heading]].\n"
            "works_at:: [[Acme Corp]]\n"
            "Inline [invested in:: [[Beta Inc]]] here, plus [[Zed]].\n"
            "`[[not a link]]`\n```\n[[also not]]\n```\n")
    links = body_links(body, "notes/page.md")
    got = [(l.target, l.key, l.type, l.source) for l in links]
    assert got == [
        ("Alice Example", "alice-example", "mentions", "wikilink"),
        ("people/bob", "people/bob", "mentions", "wikilink"),
        ("Carol", "carol", "mentions", "wikilink"),
        ("Dave", "dave", "mentions", "wikilink"),
        ("Erin", "erin", "mentions", "wikilink"),
        ("../people/frank.md", "people/frank", "mentions", "markdown"),
        ("notes/g h.md", "notes/g-h", "mentions", "markdown"),
        ("Acme Corp", "acme-corp", "works_at", "inline-field"),
        ("Beta Inc", "beta-inc", "invested_in", "inline-field"),
        ("Zed", "zed", "mentions", "wikilink"),
    ]
    assert links[0].context.startswith("See [[Alice Example]]")


def test_frontmatter_wikilinks_become_typed_edges_quoted_or_not():
    data = split_frontmatter('---\nworks_at: "[[Acme]]"\ninvestors: ["[[A]]", "[[B|b]]"]\n'
                             "advisor: [[Carol]]\naliases: ['[[no]]']\nnote: plain text\n---\n").data
    got = [(l.target, l.type, l.source) for l in frontmatter_links(data, "people/x.md")]
    assert got == [("Acme", "works_at", "frontmatter"), ("A", "investors", "frontmatter"),
                   ("B", "investors", "frontmatter"), ("Carol", "advisor", "frontmatter")]


def test_relative_markdown_link_escaping_the_vault_never_resolves():
    assert body_links("[x](../../outside.md)", "a.md")[0].key == ""


# -- timeline -----------------------------------------------------------------


def test_timeline_forms():
    body = ("## Timeline\n"
            "- **2024-03-01** | Crunchbase — Raised a seed round\n"
            "- **2024-04-01** Met [[Bob|Bobby]] at the fair\n"
            "- 2024-05-02: Signed the lease\n"
            "* [[2024-06-03]] — Moved in\n"
            "- 2024-13-40 not a date\n"
            "### 2024-07-04 — Offsite\nPlanned the roadmap.\nSecond line.\n"
            "## Notes\nThe round closed [Source: TechCrunch, 2024-08-05].\n"
            "```\n- 2024-09-09 inside code\n```\n")
    got = [(e.date, e.source, e.summary, e.detail) for e in extract_entries(body)]
    assert got == [
        ("2024-03-01", "Crunchbase", "Raised a seed round", None),
        ("2024-04-01", "markdown", "Met Bobby at the fair", None),
        ("2024-05-02", "markdown", "Signed the lease", None),
        ("2024-06-03", "markdown", "Moved in", None),
        ("2024-07-04", "markdown", "Offsite", "Planned the roadmap.\nSecond line."),
        ("2024-08-05", "TechCrunch", "The round closed .", None),
    ]


def test_timeline_split_rules():
    compiled, tl = split_timeline("About.\n\n---\n\n## Timeline\n- 2024-01-01 x\n")
    assert compiled.strip() == "About." and tl.startswith("## Timeline")
    compiled, tl = split_timeline("About.\n<!-- timeline -->\n- 2024-01-01 x\n")
    assert compiled.strip() == "About." and "2024-01-01" in tl
    # a bare rule is only a rule, and a Timeline section with prose is not split off
    assert split_timeline("A\n---\nB\n")[1] == ""
    assert split_timeline("## Timeline\nSome prose.\n")[1] == ""


# -- chunks -------------------------------------------------------------------


def test_chunks_split_at_headings_and_are_bounded():
    body = "intro\n# A\nalpha\n## B\n" + ("beta " * 800) + "\n```\n# not a heading\n```\n"
    chunks = split_chunks(body)
    assert [c.heading for c in chunks[:2]] == [None, "A"]
    assert all(len(c.text) <= MAX_CHARS for c in chunks)
    assert {c.heading for c in chunks[2:]} == {"B"} and len(chunks) > 3
    assert "# not a heading" in chunks[-1].text
    # the hash follows the content: equal pieces share it, different ones do not
    assert all((a.hash == b.hash) == ((a.heading, a.text) == (b.heading, b.text)) for a in chunks for b in chunks)


def test_a_blank_page_still_has_one_chunk():
    assert [(c.heading, c.text) for c in split_chunks("")] == [(None, "")]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("ab #-*[]|:\n`~>!()0123456789—") + ["---\n", "[[", "]]", "::", "2024-01-02",
                                                                      "\ufffd", "\x00"]),
                max_size=120).map("".join))
def test_parser_never_raises(text):
    p = parse_page("notes/x.md", text)
    assert p.chunks and p.title


# the fast frontmatter path must agree with YAML wherever it answers
_WORD = st.sampled_from(["Alice", "Alice E.", "yes", "No", "null", "on", "x-1", "v1.2", "a b", "12", "1.5", "2024-01-02",
                         "it's", "[[Acme]]", "#tag", "a: b", "a #c", "~", "", " ", "(x)", "&a", "*b", "!t", "e5",
                         "a,b", "\\", "\\u00e9", "\\x41", "é", "\t"])
_VALUE = st.one_of(
    _WORD,
    _WORD.map(lambda w: '"' + w + '"'),
    _WORD.map(lambda w: "'" + w + "'"),
    st.lists(st.one_of(_WORD, _WORD.map(lambda w: '"' + w + '"')), max_size=3).map(lambda ws: "[" + ", ".join(ws) + "]"),
)
_LINE = st.one_of(
    st.tuples(st.sampled_from(["title", "aliases", "tags", "type", "x_y", "a-b", "Title"]), _VALUE).map(
        lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(["tags:", "  - one", "  - 'two'", "  - \"three\"", "\t- tab", "# comment", "", "  nested: x",
                     "- top", "key:value", "k :  v  "]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_LINE, max_size=6).map("\n".join))
def test_frontmatter_is_what_yaml_says(raw):
    import yaml

    from brain.indexer.vault.frontmatter import json_safe, split_frontmatter

    try:  # the loader brain uses (libyaml's differs from pure Python on stray tabs)
        expected = yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        expected = "error"
    fm = split_frontmatter(f"---\n{raw}\n---\nbody\n")
    assert fm.body == "body\n"
    if expected == "error":
        assert fm.error and fm.data == {}, raw
    elif isinstance(expected, dict):
        assert fm.error is None and fm.data == json_safe(expected), raw
    else:
        assert fm.data == {}, raw


def test_open_tasks_are_unchecked_list_items_outside_code():
    from brain.indexer.vault.tasks import open_tasks

    text = ("- [ ] call Priya\n* [ ] star bullet\n1. [ ] numbered 📅 2027-01-02\n- [x] done\n- [X] done too\n"
            "- [] not a task\n- [ ]\n  - [ ] nested [due:: 2026-12-10]\n```\n- [ ] example\n```\n")
    assert open_tasks(text) == [("call Priya", None), ("star bullet", None),
                                ("numbered 📅 2027-01-02", "2027-01-02"),
                                ("nested [due:: 2026-12-10]", "2026-12-10")]


def test_open_tasks_inside_callouts_and_blockquotes_count():
    from brain.indexer.vault.tasks import open_tasks

    text = ("> [!todo] Errands\n> - [ ] call the bank\n> - [x] pay rent\n>- [ ] tight quote\n"
            "> > - [ ] nested quote 📅 2026-12-03\n>   - [ ] indented in a quote\n"
            "> plain quoted line with [ ] brackets\n```\n> - [ ] fenced example\n```\n")
    assert open_tasks(text) == [("call the bank", None), ("tight quote", None),
                                ("nested quote 📅 2026-12-03", "2026-12-03"), ("indented in a quote", None)]


def test_links_on_an_open_task_line_carry_the_task():
    body = ("- [ ] send [[Priya Raman|Priya]] the contract 📅 2026-12-04\n"
            "> [!todo]\n> - [ ] call [[Bank#Branch]] about `[[code]]` fees\n"
            "  - [ ] review [the plan](../projects/plan.md)\n"
            "- [x] done with [[Priya Raman]]\n"
            "See [[Priya Raman]] later.\n"
            "```\n- [ ] example [[Priya Raman]]\n```\n")
    got = [(l.key, l.task, l.due) for l in body_links(body, "daily/2026-12-01.md")]
    assert got == [
        ("priya-raman", "send [[Priya Raman|Priya]] the contract 📅 2026-12-04", "2026-12-04"),
        ("bank", "call [[Bank#Branch]] about `[[code]]` fees", None),
        ("projects/plan", "review [the plan](../projects/plan.md)", None),
        ("priya-raman", None, None),
        ("priya-raman", None, None),
    ]

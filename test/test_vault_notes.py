"""Reading a vault: which files are notes, titles, wikilinks, chunks."""
from __future__ import annotations

from anatid.vault import notes as nt


def test_title_from_front_matter_then_h1_then_file_name():
    assert nt.parse("a.md", b"---\ntitle: 'Front Title'\n---\n# H1 Title\n\ntext\n").title == "Front Title"
    assert nt.parse("a.md", b"intro\n\n# H1 [[x|Title]]\n\ntext\n").title == "H1 Title"
    assert nt.parse("dir/plain name.md", b"no heading here\n").title == "plain name"
    # a heading inside a code fence is not the title
    assert nt.parse("b.md", b"```\n# not this\n```\n\n# This\n").title == "This"


def test_wikilinks_strip_alias_and_anchor_and_ignore_code():
    text = ("See [[Alpha|the alpha]], [[beta#Section]], [[sub/Gamma.md#^block|g]] and [[alpha]] again.\n"
            "```\n[[in-fence]]\n```\n~~~python\n[[in-tilde]]\n~~~\nInline `[[in-code]]` too. [[#Local heading]]\n")
    assert nt.wikilinks(text) == ["Alpha", "beta", "sub/Gamma"]


def test_bom_and_crlf_are_read_correctly():
    note = nt.parse("bom.md", b"\xef\xbb\xbf---\r\ntitle: With BOM\r\nsuperseded_by: \"[[newer|v2]]\"\r\n---\r\nBody.\r\n")
    assert note.title == "With BOM"
    assert note.superseded_by == "newer"
    assert "\ufeff" not in note.chunks[0]


def test_scan_skips_dot_folders_and_sync_conflicts(tmp_path):
    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "x.md").write_text("[[a]]")
    (tmp_path / ".trash").mkdir()
    (tmp_path / ".trash" / "old.md").write_text("gone")
    (tmp_path / "sub").mkdir()
    for name in ["a.md", "sub/b.markdown", "a.sync-conflict-20250101-101010-XYZ.md", "a (conflicted copy).md",
                 "image.png", "notes.txt"]:
        (tmp_path / name).write_text("x")
    assert nt.scan(tmp_path) == ["a.md", "sub/b.markdown"]


def test_resolver_by_path_then_name_case_insensitive():
    r = nt.Resolver(["top/Note.md", "deep/er/Note.md", "x/Other.md"])
    assert r("note") == "top/Note.md"                 # the shorter path wins an ambiguous name
    assert r("deep/er/note") == "deep/er/Note.md"
    assert r("OTHER") == "x/Other.md"
    assert r("missing") is None


def test_chunks_keep_paragraphs_and_carry_the_title():
    body = "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(10))
    note = nt.parse("t.md", ("---\ntitle: Long One\n---\n" + body).encode())
    assert len(note.chunks) > 1
    assert note.chunks[0].startswith("# Long One")
    assert all(len(c) <= nt.CHUNK_CHARS + 300 for c in note.chunks)
    assert note.first_paragraph.startswith("Paragraph 0")

"""``userfile.toml_key_lines``: the line of every key and table of a TOML file (tomllib keeps
none), for messages that name ``file:line: key``."""

import tomllib

import pytest

from opsim.userfile import line_of, toml_key_lines

TEXT = """\
# a comment with [brackets] and key = 1
[need]
usable = "100TB"  # trailing [comment]
max_latency = [
  "p99=5ms",  # ]
  "read:p99=9ms",
]
note = \"\"\"two
lines = 3
[not.a.table]\"\"\"
years = 5

[[candidate]]
preset = 'a'
"quoted key" = 1
[[candidate]]
inline = { a = 1, b = [2, 3] }
price = 100
[x.y]
z.w = 1
[[candidate.sub]]
k = 1
"""


def test_every_key_and_table_has_its_line():
    tomllib.loads(TEXT)  # the scan reads text that parsed
    lines = toml_key_lines(TEXT)
    assert lines == {
        ("need",): 2,
        ("need", "usable"): 3,
        ("need", "max_latency"): 4,
        ("need", "note"): 8,
        ("need", "years"): 11,
        ("candidate", 0): 13,
        ("candidate", 0, "preset"): 14,
        ("candidate", 0, "quoted key"): 15,
        ("candidate", 1): 16,
        ("candidate", 1, "inline"): 17,
        ("candidate", 1, "price"): 18,
        ("x", "y"): 19,
        ("x", "y", "z", "w"): 20,
        ("candidate", 1, "sub", 0): 21,
        ("candidate", 1, "sub", 0, "k"): 22,
    }


@pytest.mark.parametrize(
    "path, line",
    [(("candidate", 1, "slots"), 16), (("need", "skew"), 2), (("candidate", 0, "preset"), 14), (("nowhere",), None)],
)
def test_a_missing_key_takes_its_table_s_line(path, line):
    assert line_of(toml_key_lines(TEXT), path) == line

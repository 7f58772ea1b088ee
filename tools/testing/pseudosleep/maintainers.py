# SPDX-License-Identifier: GPL-2.0
"""Our entries of the kernel's MAINTAINERS file, as the series adds its
files: patches/patchset/MAINTAINERS holds the entries whole; update()
writes each into a kernel tree's MAINTAINERS, in its sorted place, with
only the F: lines that match a file of that tree.  make-patchset runs it
after each patch's files are in, so that a patch adding files adds their
F: lines (checkpatch's "does MAINTAINERS need updating?"), and
check-patchset and `make overlay` on the tree make builds, so that both
end alike.

    python3 maintainers.py REPO KDIR     update KDIR/MAINTAINERS
"""

import glob
import os
import sys


def load(path):
    """[(name, lines)] of the entries in PATH: a name line, then its
    "X:\\t..." lines; '#' lines and blank lines between entries."""
    entries, cur = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                cur = None
            elif cur is None:
                cur = (line, [])
                entries.append(cur)
            elif len(line) > 2 and line[1:3] == ":\t":
                cur[1].append(line)
            else:
                raise ValueError("%s:%d: want 'X:<tab>value' in entry %s"
                                 % (path, n, cur[0]))
    return entries


def present(kdir, pattern):
    """Whether an F: pattern matches something in kdir."""
    if pattern.endswith("/"):
        return os.path.isdir(os.path.join(kdir, pattern))
    return bool(glob.glob(os.path.join(kdir, pattern)))


def render(kdir, name, lines):
    """The entry's text with the F: lines present, or None if none is."""
    keep = [ln for ln in lines if not ln.startswith("F:\t") or
            present(kdir, ln[3:])]
    if not any(ln.startswith("F:\t") for ln in keep):
        return None
    return [name] + keep


def is_header(lines, i):
    """Line i starts an entry: a name, then an "X:\\t" line."""
    return (i + 1 < len(lines) and lines[i].strip() and
            not lines[i][:1].isspace() and lines[i][1:3] != ":\t" and
            len(lines[i + 1]) > 2 and lines[i + 1][1:3] == ":\t")


def place(lines, start, name):
    """Where an entry called NAME goes: before the entry whose name is the
    smallest of those above NAME (upper-cased, as parse-maintainers.pl
    sorts).  MAINTAINERS has misordered entries, so the first name above
    NAME can be far from its place."""
    key = name.upper()
    above = [(lines[i].upper(), i) for i in range(start, len(lines))
             if is_header(lines, i) and lines[i].upper() > key]
    return min(above)[1] if above else len(lines)


def update(kdir, entries):
    """Write ENTRIES into KDIR/MAINTAINERS; True if the file changed."""
    path = os.path.join(kdir, "MAINTAINERS")
    with open(path) as f:
        old = f.read()
    lines = old.split("\n")
    names = {name for name, _ in entries}
    # Our entries as an earlier update wrote them go first.
    i = 0
    while i < len(lines):
        if lines[i] in names and is_header(lines, i):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            del lines[i:j + 1]
        else:
            i += 1
    start = lines.index("Maintainers List") if "Maintainers List" in \
        lines else 0
    for name, body in entries:
        text = render(kdir, name, body)
        if not text:
            continue
        at = place(lines, start, name)
        lines[at:at] = text + [""]
    new = "\n".join(lines)
    if new == old:
        return False
    with open(path, "w") as f:
        f.write(new)
    return True


def update_from_repo(repo, kdir):
    return update(kdir, load(os.path.join(repo, "patches", "patchset",
                                          "MAINTAINERS")))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: maintainers.py REPO KDIR")
    try:
        if update_from_repo(sys.argv[1], sys.argv[2]):
            print("  MAINT   MAINTAINERS")
    except (OSError, ValueError) as e:
        sys.exit("maintainers.py: %s" % e)

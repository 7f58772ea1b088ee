# SPDX-License-Identifier: GPL-2.0
"""The map of the submitted patch series (patches/patchset/map) and the git
steps that make-patchset and check-patchset share.

The map says, for each series in order, which hook patches of
patches/series it holds and in which order, which new files (the overlay:
kernel/power/pseudosleep.c, napd, ...) each patch adds, and which new
patches (commit message in patches/patchset/NAME.msg) it adds for files no
hook patch needs.  Lines:

    series NAME         a series; its cover letter is patches/patchset/cover-NAME
    patch SUBJECT       the hook patch of patches/series with this subject
    new NAME            a new patch, its message in patches/patchset/NAME.msg
    file PATH           an overlay file (PATH/ : every one below) for the
                        patch or new patch above
    outside PATH REASON overlay files that are in no series, and why

Every overlay file must match exactly one file or outside line and every
hook patch must be in exactly one series: anything else is an error that
names the map's FILE:LINE."""

import email
import os
import re
import signal
import subprocess
import sys
import tempfile


class MapError(Exception):
    pass


class Item:
    """One patch of a generated series: a hook patch or a new one."""

    def __init__(self, kind, name, where):
        self.kind = kind        # "patch" or "new"
        self.name = name        # the subject, or the new patch's name
        self.where = where      # map FILE:LINE
        self.entries = []       # (path, where) of its file lines
        self.files = []         # the overlay files they match
        self.patch = None       # patches/ file of a hook patch


class Series:
    def __init__(self, name, where):
        self.name = name
        self.where = where
        self.items = []


def parse_map(path):
    """The series and outside entries of the map, or MapError naming a line."""
    series, outside = [], []
    item = None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            where = "%s:%d" % (path, n)
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if not rest:
                raise MapError("%s: '%s' needs an argument" % (where, word))
            if word == "series":
                if not re.fullmatch(r"[a-z0-9-]+", rest):
                    raise MapError("%s: series name '%s': use a-z, 0-9 "
                                   "and -" % (where, rest))
                series.append(Series(rest, where))
                item = None
            elif word in ("patch", "new"):
                if not series:
                    raise MapError("%s: '%s' before any 'series' line"
                                   % (where, word))
                if word == "new" and not re.fullmatch(r"[a-z0-9-]+", rest):
                    raise MapError("%s: new patch name '%s': use a-z, 0-9 "
                                   "and -" % (where, rest))
                item = Item(word, rest, where)
                series[-1].items.append(item)
            elif word == "file":
                if item is None:
                    raise MapError("%s: 'file' before any 'patch' or 'new' "
                                   "line of its series" % where)
                item.entries.append((rest, where))
            elif word == "outside":
                p, _, why = rest.partition(" ")
                if not why.strip():
                    raise MapError("%s: 'outside %s' needs a reason"
                                   % (where, p))
                outside.append((p, where))
            else:
                raise MapError("%s: unknown line '%s' (series, patch, new, "
                               "file or outside)" % (where, word))
    if not series:
        raise MapError("%s: no series" % path)
    return series, outside


def matches(entry, f):
    return f.startswith(entry) if entry.endswith("/") else f == entry


def subject_of(patch):
    """A patch file's subject without its [PATCH n/m] prefix."""
    with open(patch, errors="replace") as f:
        msg = email.message_from_file(f)
    subject = " ".join(str(msg["Subject"] or "").split())
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", subject)


def hook_patches(pdir):
    """The patches of pdir/series in order, as (file name, subject)."""
    out = []
    with open(os.path.join(pdir, "series")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            path = os.path.join(pdir, line)
            if not os.path.isfile(path):
                raise MapError("%s/series: %s not found" % (pdir, line))
            out.append((line, subject_of(path)))
    return out


def overlay_files(repo, trees):
    """The files the overlay copies over the kernel tree (as overlay does)."""
    out = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached",
                          "--others", "--exclude-standard", "--"] + trees,
                         check=True, capture_output=True).stdout
    return sorted(f for f in out.decode().split("\0")
                  if f and os.path.isfile(os.path.join(repo, f)))


def assign(series, outside, hooks, files):
    """Fill in each item's patch and files; the list of errors found."""
    errors = []
    by_subject = {}
    for name, subject in hooks:
        by_subject.setdefault(subject, []).append(name)
    used = {}
    for s in series:
        for it in s.items:
            if it.kind != "patch":
                continue
            names = by_subject.get(it.name, [])
            if len(names) != 1:
                errors.append("%s: %s patches/series with the subject '%s'"
                              % (it.where, "no patch in" if not names else
                                 "%d patches in" % len(names), it.name))
                continue
            if it.name in used:
                errors.append("%s: '%s' is already in the map at %s"
                              % (it.where, it.name, used[it.name]))
                continue
            used[it.name] = it.where
            it.patch = names[0]
    for name, subject in hooks:
        if subject not in used:
            errors.append("patches/series: %s ('%s') is in no series of "
                          "the map" % (name, subject))
    entries = [(e, w, it) for s in series for it in s.items
               for e, w in it.entries] + [(e, w, None) for e, w in outside]
    hits = {w: 0 for _, w, _ in entries}
    for f in files:
        found = [(e, w, it) for e, w, it in entries if matches(e, f)]
        if not found:
            errors.append("%s: in no series of the map (add a 'file' or "
                          "'outside' line)" % f)
        elif len(found) > 1:
            errors.append("%s: matched by %s" % (f, ", ".join(w for _, w, _
                                                             in found)))
        else:
            e, w, it = found[0]
            hits[w] += 1
            if it is not None:
                it.files.append(f)
    for e, w, _ in entries:
        if hits[w] == 0:
            errors.append("%s: '%s' matches no overlay file" % (w, e))
    return errors


def outside_files(outside, files):
    return [f for f in files if any(matches(e, f) for e, _ in outside)]


def load(repo, trees):
    """Map, hook patches and overlay assigned, or MapError with every error."""
    pdir = os.path.join(repo, "patches")
    series, outside = parse_map(os.path.join(pdir, "patchset", "map"))
    files = overlay_files(repo, trees)
    errors = assign(series, outside, hook_patches(pdir), files)
    if errors:
        raise MapError("\n".join(errors))
    return series, outside, files


def git(wt, *args, env=None, check=True):
    """Run git in the work tree; its output, or RuntimeError with it."""
    r = subprocess.run(["git", "-C", wt] + list(args), capture_output=True,
                       text=True, env=env)
    if check and r.returncode:
        raise RuntimeError("git %s: %s" % (" ".join(args[:2]),
                                           (r.stderr or r.stdout).strip()))
    return r


def identity_env(date):
    """Author and committer for new commits: the hook patches' author, a
    fixed date, so that regenerating gives the same series."""
    env = dict(os.environ)
    for who in ("AUTHOR", "COMMITTER"):
        env["GIT_%s_NAME" % who] = "pseudosleep developers"
        env["GIT_%s_EMAIL" % who] = "kernel@pseudosleep.invalid"
        env["GIT_%s_DATE" % who] = date
    return env


def scratch_tree(kdir, what):
    """A detached work tree of kdir's `pristine` commit, in /dev/shm when
    it is there (a kernel tree checks out and is compared there in a
    third of the time); drop_tree() removes it."""
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    path = tempfile.mkdtemp(prefix="pseudosleep-%s-" % what, dir=shm)
    git(kdir, "worktree", "prune")
    git(kdir, "worktree", "add", "-q", "--detach", "-f", path, "pristine")
    return path


def drop_tree(kdir, path):
    git(kdir, "worktree", "remove", "--force", path, check=False)
    subprocess.run(["rm", "-rf", path], check=True)
    git(kdir, "worktree", "prune", check=False)


def exit_on_sigterm():
    """SIGTERM runs the finally clauses that remove the scratch tree."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))


def am(wt, patch, env, three_way=False):
    """git am one patch; RuntimeError with git's message when it fails."""
    args = ["am", "-q", "--keep-cr", "--whitespace=nowarn"]
    r = git(wt, *(args + (["-3"] if three_way else []) + [patch]),
            env=env, check=False)
    if r.returncode:
        git(wt, "am", "--abort", check=False)
        raise RuntimeError("%s does not apply:\n  %s" % (
            os.path.basename(patch),
            (r.stderr or r.stdout).strip().replace("\n", "\n  ")))

#!/usr/bin/env python3
"""Build the replay files in this folder from the research report's published results.

Usage:  python3 data/replay/import.py MIRROR [OUTDIR]

MIRROR is a git directory (bare or not) of
sungjoonyoung/High-Accuracy_Warnsdorff-s_Rule-Based_Heuristic_Solution_for_the_Higher-Dimensional_Generalized_KTP;
OUTDIR defaults to the folder of this script. The script reads the authors'
result files (`data/<folder>/Dimension=<D>_N=<N>.txt`) from the commit HEAD of
the mirror with `git cat-file` and writes one `<experiment>.tsv.gz` per entry of
EXPERIMENTS below. It only parses their text output; none of their code is
used or copied. The move orders below are written out from reading their
programs (which program and why: see README.md); the functions that spell them
out are ours.

Standard library only. The output is deterministic (gzip mtime 0), so rerunning
the script on the same mirror reproduces the files byte for byte.
"""

import gzip
import itertools
import os
import re
import subprocess
import sys

REPO = ("sungjoonyoung/High-Accuracy_Warnsdorff-s_Rule-Based_Heuristic_Solution_"
        "for_the_Higher-Dimensional_Generalized_KTP")

# ---------------------------------------------------------------------------
# Move orders
# ---------------------------------------------------------------------------


def canonical(rule, d):
    """SPEC.md's canonical order: magnitude permutations in descending
    lexicographic order; within each, sign patterns over the non-zero
    coordinates, first axis first, + before -."""
    padded = list(rule) + [0] * (d - len(rule))
    perms = sorted(set(itertools.permutations(padded)), reverse=True)
    out = []
    for p in perms:
        nz = [i for i, v in enumerate(p) if v]
        for signs in itertools.product((1, -1), repeat=len(nz)):
            v = list(p)
            for i, s in zip(nz, signs):
                v[i] = s * v[i]
            out.append(tuple(v))
    return out


def knight2d_accu():
    """(2,1) in 2D, their `2D.cpp` of just_degree / degree+distance:
    counter-clockwise from (2,1)."""
    return [(2, 1), (1, 2), (-1, 2), (-2, 1), (-2, -1), (-1, -2), (1, -2), (2, -1)]


def knight3d_cyclic():
    """(2,1) in 3D, their `3D.cpp` (accu, accu-more, (2,1) accu-200, chck-time):
    axis pairs (0,1), (1,2), (2,0) in that order (the first axis of the pair
    takes the first listed magnitude); within a pair, sign1 over (-,+), then
    sign2 over (-,+), and for each sign pair first (2*s1, 1*s2) then (1*s1, 2*s2)."""
    out = []
    for i in range(3):
        a, b = i, (i + 1) % 3
        for s1 in (-1, 1):
            for s2 in (-1, 1):
                v = [0, 0, 0]
                v[a], v[b] = 2 * s1, 1 * s2
                out.append(tuple(v))
                v = [0, 0, 0]
                v[a], v[b] = 1 * s1, 2 * s2
                out.append(tuple(v))
    return out


def knight_pairs(d):
    """(2,1) in 4D and 5D, their `4D.cpp` / `5D.cpp`: axis pairs (i, j), i < j,
    in lexicographic order; then as knight3d_cyclic within a pair."""
    out = []
    for a in range(d):
        for b in range(a + 1, d):
            for s1 in (-1, 1):
                for s2 in (-1, 1):
                    v = [0] * d
                    v[a], v[b] = 2 * s1, 1 * s2
                    out.append(tuple(v))
                    v = [0] * d
                    v[a], v[b] = 1 * s1, 2 * s2
                    out.append(tuple(v))
    return out


def leaper2d(p, q):
    """(p,q) in 2D, their (3,2), (4,1), (4,3) `2D.cpp`: (p,q) (p,-q) (-p,q)
    (-p,-q) (q,p) (q,-p) (-q,p) (-q,-p), which is SPEC's canonical order."""
    return [(p, q), (p, -q), (-p, q), (-p, -q), (q, p), (q, -p), (-q, p), (-q, -p)]


def leaper3d_groups(p, q):
    """(p,q), p > q, in 3D, their (3,2), (4,1), (4,3) `3D.cpp`: six groups
    (axis of p, axis of q) = (x,y) (x,z) (y,x) (y,z) (z,x) (z,y); within a group
    the sign of p over (+,-) outside, the sign of q over (+,-) inside."""
    out = []
    for a, b in ((0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)):
        for sp in (1, -1):
            for sq in (1, -1):
                v = [0, 0, 0]
                v[a], v[b] = sp * p, sq * q
                out.append(tuple(v))
    return out


def leaper4d_ordered(p, q):
    """(p,q), p > q, in 4D, their (3,2), (4,1), (4,3) `4D.cpp`: axis a of p over
    0..3 outside, axis b of q over 0..3 (b != a) inside; then the sign of p over
    (+,-), the sign of q over (+,-)."""
    out = []
    for a in range(4):
        for b in range(4):
            if a == b:
                continue
            for sp in (1, -1):
                for sq in (1, -1):
                    v = [0, 0, 0, 0]
                    v[a], v[b] = sp * p, sq * q
                    out.append(tuple(v))
    return out


def wazir2d():
    """(1,0) in 2D, their (1,0) `2D.cpp`: (0,1) (1,0) (-1,0) (0,-1)."""
    return [(0, 1), (1, 0), (-1, 0), (0, -1)]


def wazir(d):
    """(1,0) in 3D..5D, their (1,0) `3D.cpp`..`5D.cpp`: axis by axis, +1 then -1
    (this is SPEC's canonical order)."""
    out = []
    for a in range(d):
        for s in (1, -1):
            v = [0] * d
            v[a] = s
            out.append(tuple(v))
    return out


def leaper221():
    """(2,2,1) in 3D, their (2,2,1)-500 `3D.cpp`: magnitude patterns (2,2,1)
    (2,1,2) (1,2,2); within each, the sign of x, of y, of z nested in that order,
    each over (-,+)."""
    out = []
    for m in ((2, 2, 1), (2, 1, 2), (1, 2, 2)):
        for sx in (-1, 1):
            for sy in (-1, 1):
                for sz in (-1, 1):
                    out.append((sx * m[0], sy * m[1], sz * m[2]))
    return out


# ---------------------------------------------------------------------------
# Experiments
# ---------------------------------------------------------------------------

FOLDER_METHOD = {
    # their folder name -> (slug in our file names, SPEC.md method)
    "just_degree": ("w", "w"),
    "degree+distance": ("wplus", "w+"),
    "W++": ("wpp", "aw"),
    "W+++": ("wppp", "aw+"),
    "GW": ("gw", "mw"),
}

NOTE_TIME = ("micros = their chrono::steady_clock time of the walk(s) only, in "
             "microseconds (set-up of the degree table before the first walk "
             "not included), one process per start, compiled g++ -O2, Windows")
NOTE_DEGREE = ("their degree table counts unvisited neighbours exactly as SPEC.md; "
               "ties: strict '<' on degree keeps the first move in order")
NOTE_DIST = ("W+ tiebreak: strict '>' on the squared distance from ((N-1)/2, ..) "
             "computed in double (exact: half-integers), so remaining ties keep "
             "the first move in order, as SPEC.md")
NOTE_AW = ("their loop: a walk with the order as listed, then up to K more walks, "
           "rotating the move arrays left by one before each, stopping at the first "
           "success; the last (K+1-th) walk repeats rotation 0, so the flag equals "
           "SPEC.md's aw/aw+ (attempts may differ by one)")
NOTE_MW = ("their loop (GW): W with rotation 0; then for r = 1..K (r = K is "
           "rotation 0 again): W with rotation r, then W+ with rotation r; stop at "
           "the first success. The walks tried are exactly SPEC.md's mw walks in a "
           "different order, so the flag equals mw's (attempts differ)")
NOTE_PADDED = ("their move arrays have {total} entries of which the last {zero} are "
               "left (0,..,0); a null move only adds a constant {zero} to every "
               "degree and never yields a candidate, so it changes nothing")

STARTS_RANDOM100 = ("starts: per N, 100 uniform random cells drawn by their driver "
                    "script (Python random, unseeded, with replacement), so starts "
                    "can repeat; on odd N only cells with an even coordinate sum "
                    "were kept")
STARTS_ACCU = ("starts: per run of their driver, the 2^D corners, the centre "
               "(N//2,..), the 2D face centres, then 100 uniform random cells "
               "(unseeded, with replacement, any colour); the driver was run "
               "more than once for some N, and each run appended its rows")


# (rule, folder, D) of data/(a,b)/<folder> whose program is not one of SPEC.md's
# methods (see README.md, "Not mapped"), or that published no data.
UNMAPPED = {
    # the first walk runs before the degree table is filled (all zeros, so it
    # prefers the cell with the most visited neighbours); the K rotations after it
    # are correct, so the flag is SPEC's aw / aw+ / mw OR that extra walk's success
    ((3, 2), "W++", 3), ((3, 2), "W+++", 3), ((3, 2), "GW", 3),
    ((4, 3), "W++", 3), ((1, 0), "W++", 3), ((1, 0), "W+++", 3),
    # the degree table is never filled at all: not Warnsdorff's rule
    ((4, 3), "degree+distance", 3),
    # the rotation loop shifts dz, dw over only the first 24 of 48 entries, so the
    # later walks use vectors that are not moves of the leaper
    ((3, 2), "GW", 4),
    # no 3D files published
    ((4, 3), "W+++", 3),
}


def exp(slug, family_dir, folder, d, rule, moves, program, notes=(), nmax=None,
        fmt="accu", method=None):
    return dict(slug=slug, folder=family_dir + "/" + folder if folder else family_dir,
                d=d, rule=rule, moves=moves, program=program, notes=list(notes),
                nmax=nmax, fmt=fmt, method=method)


def build_experiments():
    E = []

    # --- data/(3,2), (4,1), (4,3): 2D to 4D, 100 random starts per N ---------
    for rule, fam in (((3, 2), "r32"), ((4, 1), "r41"), ((4, 3), "r43")):
        p, q = rule
        base = "data/(%d,%d)" % rule
        orders = {2: leaper2d(p, q), 3: leaper3d_groups(p, q), 4: leaper4d_ordered(p, q)}
        for folder in ("just_degree", "degree+distance", "W++", "W+++", "GW"):
            for d in (2, 3, 4):
                if folder == "GW" and rule != (3, 2):
                    continue
                if (rule, folder, d) in UNMAPPED:
                    continue
                fslug, method = FOLDER_METHOD[folder]
                notes = [STARTS_RANDOM100]
                if folder in ("W++", "W+++"):
                    notes.append(NOTE_AW)
                if folder == "GW":
                    notes.append(NOTE_MW)
                # their 3D/4D W++ programs of (4,1) and (4,3) use the W+ step rule
                if folder == "W++" and rule in ((4, 1), (4, 3)) and d in (3, 4):
                    method = "aw+"
                    notes.append("their W++ %dD.cpp for (%d,%d) uses the W+ step "
                                 "(degree, then distance), unlike their W++ 2D.cpp: "
                                 "so the method is aw+, the same as W+++" % (d, p, q))
                if folder == "W++" and rule in ((4, 1), (4, 3)) and d == 4:
                    notes.append("their W++ 4D.cpp first rotated dz, dw over only 24 "
                                 "of the 48 entries (commit 4930066); it was fixed and "
                                 "all 4D files regenerated in commit 0fb74f7, the "
                                 "version read here")
                E.append(exp("%s-%s-%dd" % (fam, fslug, d), base, folder, d, rule,
                             orders[d], "%s/%s/%dD.cpp" % (base, folder, d),
                             notes, method=method))

    # --- data/(1,0): the wazir ------------------------------------------------
    base = "data/(1,0)"
    for folder, dims in (("just_degree", (2, 3, 4, 5)), ("degree+distance", (2, 3, 4, 5)),
                         ("W++", (2, 3, 4)), ("W+++", (2, 3, 4))):
        fslug, method = FOLDER_METHOD[folder]
        for d in dims:
            if ((1, 0), folder, d) in UNMAPPED:
                continue
            notes = [STARTS_RANDOM100]
            if folder in ("W++", "W+++"):
                notes.append(NOTE_AW)
            nmax = None
            if d == 5:
                nmax = 25
                notes.append("their 5D.cpp declares arrays [25]^5 but was run for "
                             "N = 1..49: rows with N > 25 indexed outside the arrays "
                             "(their results there are undefined behaviour, e.g. "
                             "instant failures) and are left out")
            E.append(exp("r10-%s-%dd" % (fslug, d), base, folder, d, (1, 0),
                         wazir2d() if d == 2 else wazir(d),
                         "%s/%s/%dD.cpp" % (base, folder, d), notes, nmax=nmax,
                         method=method))

    # --- data/(2,1) accu-200: (2,1), random starts ----------------------------
    base = "data/(2,1) accu-200"
    for folder in ("just_degree", "degree+distance"):
        fslug, method = FOLDER_METHOD[folder]
        for d in (2, 3, 4, 5):
            notes = [STARTS_RANDOM100.replace("per N, 100", "per N and run, 100")]
            if d == 4:
                notes.append(NOTE_PADDED.format(total=96, zero=48))
            if d == 5:
                notes.append(NOTE_PADDED.format(total=240, zero=160))
            order = {2: knight2d_accu(), 3: knight3d_cyclic(), 4: knight_pairs(4),
                     5: knight_pairs(5)}[d]
            E.append(exp("r21-accu200-%s-%dd" % (fslug, d), base, folder, d, (2, 1),
                         order, "%s/%s/%dD.cpp" % (base, folder, d), notes,
                         method=method))

    # --- data/(2,2,1)-500 ------------------------------------------------------
    base = "data/(2,2,1)-500"
    for folder in ("just_degree", "degree+distance"):
        fslug, method = FOLDER_METHOD[folder]
        E.append(exp("r221-500-%s-3d" % fslug, base, folder, 3, (2, 2, 1), leaper221(),
                     "%s/%s/3D.cpp" % (base, folder),
                     ["starts: per N, uniform random cells drawn by their driver script "
                      "(Python random, unseeded, with replacement, any colour; every N "
                      "here is even, so every cell is eligible)",
                      "their 3D.cpp keeps the board in flat heap vectors (N up to 1000, "
                      "10^9 cells); N^3 fits their int"],
                     method=method))

    # --- data/accu (3D only: its 4D/5D files are identical to accu-more's) ------
    for folder in ("just_degree", "degree+distance"):
        fslug, method = FOLDER_METHOD[folder]
        E.append(exp("accu-%s-3d" % fslug, "data/accu", folder, 3, (2, 1),
                     knight3d_cyclic(), "data/accu/%s/3D.cpp" % folder,
                     [STARTS_ACCU, "an earlier run than accu-more's 3D rows (other "
                      "times, other random starts), same program"], method=method))

    # --- data/accu-more: the program's own folder holds every row --------------
    for folder in ("just_degree", "degree+distance"):
        fslug, method = FOLDER_METHOD[folder]
        for d in (3, 4, 5):
            notes = [STARTS_ACCU]
            if d == 4:
                notes.append(NOTE_PADDED.format(total=96, zero=48))
            if d == 5:
                notes.append(NOTE_PADDED.format(total=240, zero=160))
            if d == 3:
                notes.append("data/accu-more/data_%s/3D and data/accu-500/data_%s/3D "
                             "hold an earlier copy of these files: the same rows, "
                             "except that their largest N stops earlier" % (folder, folder))
            else:
                notes.append("data/accu-more/data_%s/%dD, data/accu-500/data_%s and "
                             "data/accu/%s hold identical copies of these files"
                             % (folder, d, folder + ("/%dD" % d if folder != "just_degree" else ""),
                                folder))
            order = {3: knight3d_cyclic(), 4: knight_pairs(4), 5: knight_pairs(5)}[d]
            E.append(exp("accu-more-%s-%dd" % (fslug, d), "data/accu-more", folder, d,
                         (2, 1), order, "data/accu-more/%s/%dD.cpp" % (folder, d), notes,
                         method=method))

    # --- data/chck-time: one start per N until a success -----------------------
    for folder, dims in (("just_degree", (3, 4, 5)), ("degree+distance", (3,))):
        fslug, method = FOLDER_METHOD[folder]
        for d in dims:
            notes = ["starts: per N their driver tries, in order, the 2^D corners, the "
                     "centre, the 2D face centres and 10 random cells, and stops at the "
                     "first success (their program exits 1 on success); on N = 2 and 3 "
                     "none succeeded, so all of them are listed",
                     "micros: their timer also spans writing the start line to the file"]
            if d == 4:
                notes.append(NOTE_PADDED.format(total=96, zero=48))
            if d == 5:
                notes.append(NOTE_PADDED.format(total=240, zero=160))
            order = {3: knight3d_cyclic(), 4: knight_pairs(4), 5: knight_pairs(5)}[d]
            E.append(exp("chck-time-%s-%dd" % (fslug, d), "data/chck-time", folder, d,
                         (2, 1), order, "data/chck-time/%s/%dD.cpp" % (folder, d), notes,
                         fmt="chck", method=method))
    return E


# ---------------------------------------------------------------------------
# Reading the mirror
# ---------------------------------------------------------------------------


class Mirror:
    def __init__(self, path):
        self.path = path
        self._tree = None

    def git(self, *args):
        return subprocess.run(["git", "--git-dir", self.path, "-c", "core.quotepath=off"]
                              + list(args), check=True, capture_output=True).stdout

    def tree(self):
        if self._tree is None:
            self._tree = {}
            out = self.git("ls-tree", "-r", "-z", "HEAD", "data").decode("utf-8")
            for rec in out.split("\0"):
                if not rec:
                    continue
                meta, path = rec.split("\t", 1)
                self._tree[path] = meta.split()[2]
        return self._tree

    def commit(self):
        return self.git("rev-parse", "HEAD").decode().strip()

    def read(self, blob):
        return self.git("cat-file", "blob", blob).decode("utf-8")


LINE_ACCU = re.compile(r"Start position: (\d+(?: \d+)*) - (Success|Fail) "
                       r"Execution time: (\d+) ms \((\d+) \u03bcs\)$")
HEAD_ACCU = re.compile(r"Success: (\d+) Fail: (\d+)$")
LINE_CHCK_START = re.compile(r"Start position: (\d+(?: \d+)*) (Yes|No) solution found$")
LINE_CHCK_TIME = re.compile(r"Execution time: (\d+) ms \((\d+) \u03bcs\)$")


def parse_accu(text, d, where):
    """Rows (start tuple, success, micros) of a file their knight_tour programs
    rewrote after every start: a 'Success: a Fail: b' line, then one line a start."""
    lines = text.replace("\r", "").split("\n")
    rows, head = [], None
    for i, ln in enumerate(lines):
        if not ln:
            continue
        if i == 0:
            m = HEAD_ACCU.match(ln)
            if m:
                head = (int(m.group(1)), int(m.group(2)))
                continue
        m = LINE_ACCU.match(ln)
        if not m:
            raise ValueError("%s: line %d not understood: %r" % (where, i + 1, ln))
        start = tuple(int(t) for t in m.group(1).split())
        if len(start) != d:
            raise ValueError("%s: line %d has %d coordinates" % (where, i + 1, len(start)))
        rows.append((start, m.group(2) == "Success", int(m.group(4))))
    if head is not None:
        s = sum(1 for r in rows if r[1])
        if (s, len(rows) - s) != head:
            raise ValueError("%s: header %r but rows give %r" % (where, head, (s, len(rows) - s)))
    return rows


def parse_chck(text, d, where):
    """Rows of a chck-time file: pairs of lines 'Start position: .. Yes/No
    solution found' and 'Execution time: ..'."""
    lines = [ln for ln in text.replace("\r", "").split("\n") if ln]
    rows = []
    i = 0
    while i < len(lines):
        m = LINE_CHCK_START.match(lines[i])
        if not m:
            raise ValueError("%s: line %d not understood: %r" % (where, i + 1, lines[i]))
        if i + 1 >= len(lines):
            break  # a start without a result: the run did not finish
        t = LINE_CHCK_TIME.match(lines[i + 1])
        if not t:
            raise ValueError("%s: line %d not understood: %r" % (where, i + 2, lines[i + 1]))
        start = tuple(int(v) for v in m.group(1).split())
        if len(start) != d:
            raise ValueError("%s: line %d has %d coordinates" % (where, i + 1, len(start)))
        rows.append((start, m.group(2) == "Yes", int(t.group(2))))
        i += 2
    return rows


def collect(mirror, e):
    """All rows of an experiment as (n, start, success, micros), by N, then in
    file order; and the set of N that were skipped."""
    tree = mirror.tree()
    pat = re.compile(re.escape(e["folder"]) + r"/Dimension=%d_N=(\d+)\.txt$" % e["d"])
    files = sorted((int(m.group(1)), p) for p in tree for m in [pat.match(p)] if m)
    if not files:
        raise ValueError("no files for %s in %s" % (e["slug"], e["folder"]))
    out, skipped = [], []
    for n, path in files:
        if e["nmax"] is not None and n > e["nmax"]:
            skipped.append(n)
            continue
        text = mirror.read(tree[path])
        rows = (parse_accu if e["fmt"] == "accu" else parse_chck)(text, e["d"], path)
        for start, ok, us in rows:
            if any(not 0 <= c < n for c in start):
                raise ValueError("%s: start %r outside N=%d" % (path, start, n))
            out.append((n, start, ok, us))
    return out, skipped


def fmt_moves(moves):
    return " ".join(",".join(str(c) for c in m) for m in moves)


def write(e, rows, skipped, outdir, commit):
    rule = ",".join(str(c) for c in e["rule"])
    can = canonical(e["rule"], e["d"])
    assert sorted(can) == sorted(e["moves"]), e["slug"]  # same move set
    assert len(set(e["moves"])) == len(e["moves"]), e["slug"]
    moves = "canonical" if e["moves"] == can else fmt_moves(e["moves"])
    ns = sorted({r[0] for r in rows})
    head = [
        "# experiment: %s" % e["slug"],
        "# source: %s, %s" % (REPO, e["folder"]),
        "# program: %s" % e["program"],
        "# rule: %s" % rule,
        "# dims: %d" % e["d"],
        "# moves: %s" % moves,
        "# note: read from commit %s of the authors' repository" % commit,
    ]
    for n in e["notes"]:
        if n:
            head.append("# note: %s" % n)
    head.append("# note: %s" % NOTE_TIME)
    head.append("# note: " + (NOTE_DIST if e["method"] in ("w+", "aw+", "mw") else NOTE_DEGREE))
    if skipped:
        head.append("# note: N left out: %s" % ",".join(str(n) for n in skipped))
    head.append("# note: %d rows, N = %d..%d (%d sizes)" % (len(rows), ns[0], ns[-1], len(ns)))
    body = ["n\tmethod\tstart\tsuccess\tmicros"]
    for n, start, ok, us in rows:
        body.append("%d\t%s\t%s\t%d\t%d" % (n, e["method"], ",".join(map(str, start)),
                                          1 if ok else 0, us))
    data = ("\n".join(head + body) + "\n").encode("utf-8")
    path = os.path.join(outdir, e["slug"] + ".tsv.gz")
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as g:
            g.write(data)
    return path


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    mirror = Mirror(argv[1])
    outdir = argv[2] if len(argv) > 2 else os.path.dirname(os.path.abspath(__file__))
    commit = mirror.commit()
    only = set(argv[3:])
    for e in build_experiments():
        if only and e["slug"] not in only:
            continue
        rows, skipped = collect(mirror, e)
        path = write(e, rows, skipped, outdir, commit)
        print("%-24s %7d rows  %8d bytes  %s" % (e["slug"], len(rows),
                                                os.path.getsize(path), e["folder"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

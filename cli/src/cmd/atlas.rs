//! `ksweep atlas`: computes the atlas of leaper tours
//! (`tour::exists::atlas`) and writes it as the repository ships it: the
//! entries (`atlas.tsv`), a README with the shares decided and every
//! unknown, and one picture per leaper. `--draw` redraws the README and
//! pictures from an existing `atlas.tsv` without searching.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use figures::{AtlasCell, AtlasClass, AtlasPicture};
use ksweep_proto::build::Build;
use rayon::prelude::*;
use tour::exists::atlas::{coverage, settle, settle_board, Atlas, Entry, Verdict};
use tour::Configuration;

use crate::output_file::write_whole;

/// Compute the atlas of leaper tours and write it with its pictures.
#[derive(Debug, Args)]
pub struct AtlasArgs {
    /// The directory to write `atlas.tsv`, `README.md` and `pictures/` to.
    #[arg(long, value_name = "DIR", default_value = "atlas")]
    pub out: PathBuf,
    /// Search time for each kind of tour on each board no proof settles
    /// at once: `10s`, `1m`.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::cmd::exists::parse_budget)]
    pub budget: Duration,
    /// Threads (default: every core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Only boards whose sides are all at most this (a quick look; the
    /// shipped atlas has them all).
    #[arg(long, value_name = "N")]
    pub max_side: Option<u32>,
    /// Redraw README.md and the pictures from DIR/atlas.tsv; search nothing.
    #[arg(long, conflicts_with = "retry")]
    pub draw: bool,
    /// Search again, with this `--budget`, only the entries of
    /// DIR/atlas.tsv that are unknown; keep the rest.
    #[arg(long)]
    pub retry: bool,
}

pub fn run(args: AtlasArgs, out: &mut impl Write) -> Result<()> {
    std::fs::create_dir_all(args.out.join("pictures"))
        .with_context(|| format!("--out: cannot create {}", args.out.display()))?;
    let tsv = args.out.join("atlas.tsv");
    let read = || -> Result<Atlas> {
        let text = std::fs::read_to_string(&tsv).with_context(|| format!("cannot read {}", tsv.display()))?;
        Atlas::parse(&text).with_context(|| format!("{}", tsv.display()))
    };
    let (header, entries) = if args.draw {
        let atlas = read().context("--draw")?;
        (atlas.header.clone(), atlas.entries().to_vec())
    } else if args.retry {
        let atlas = read().context("--retry")?;
        let began = Instant::now();
        let entries = retry(&args, atlas.entries())?;
        let mut header = atlas.header.clone();
        header.push(format!(
            "unknown entries searched again: ksweep atlas --retry --budget {}s, {:.0} s on {} threads (ksweep {})",
            args.budget.as_secs_f64(),
            began.elapsed().as_secs_f64(),
            args.threads.unwrap_or_else(rayon::current_num_threads),
            Build::current()
        ));
        write_whole(&tsv, Atlas::text(&header, &entries).as_bytes())?;
        (header, entries)
    } else {
        let began = Instant::now();
        let entries = compute(&args)?;
        let header = vec![
            "knight-sweep atlas of leaper tours, format 1 (docs/methods.md, atlas/README.md)".to_string(),
            format!(
                "made by: ksweep atlas --budget {}s{} (ksweep {})",
                args.budget.as_secs_f64(),
                args.max_side.map_or(String::new(), |n| format!(" --max-side {n}")),
                Build::current(),
            ),
            format!(
                "built in {:.0} s on {} threads",
                began.elapsed().as_secs_f64(),
                args.threads.unwrap_or_else(rayon::current_num_threads)
            ),
        ];
        write_whole(&tsv, Atlas::text(&header, &entries).as_bytes())?;
        (header, entries)
    };
    let summary = Summary::of(&entries);
    for (rule, picture) in pictures(&entries) {
        let path = args.out.join("pictures").join(format!("{}.svg", file_name(&rule)));
        write_whole(&path, picture.svg()?.as_bytes())?;
    }
    write_whole(&args.out.join("README.md"), summary.readme(&header, &entries).as_bytes())?;
    writeln!(
        out,
        "{} entries, {} decided ({:.1} %), {} unknown; written to {}",
        entries.len(),
        summary.decided(),
        100.0 * summary.decided() as f64 / entries.len().max(1) as f64,
        entries.len() - summary.decided(),
        args.out.display()
    )?;
    Ok(())
}

/// Settles every board of the coverage, in its order.
fn compute(args: &AtlasArgs) -> Result<Vec<Entry>> {
    let boards: Vec<(Vec<u32>, Vec<u32>)> = coverage()
        .into_iter()
        .filter(|(_, sides)| args.max_side.is_none_or(|n| sides.iter().all(|&s| s <= n)))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads.unwrap_or(0)).build()?;
    let done = AtomicUsize::new(0);
    let total = boards.len();
    let settled: Vec<Result<[Entry; 2]>> = pool.install(|| {
        boards
            .par_iter()
            .map(|(rule, sides)| {
                let config = Configuration::leaper(rule, sides)?;
                let (open, closed) = settle_board(&config, args.budget)?;
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_multiple_of(100) || n == total {
                    eprintln!("atlas: {n} of {total} boards");
                }
                let entry = |closed, verdict| Entry { rule: rule.clone(), sides: sides.clone(), closed, verdict };
                Ok([entry(false, open), entry(true, closed)])
            })
            .collect()
    });
    let mut entries = Vec::with_capacity(2 * total);
    for pair in settled {
        entries.extend(pair?);
    }
    Ok(entries)
}

/// `entries`, the unknown ones settled again under `--budget`; one still
/// unknown keeps its entry, whose tries may have had a larger budget.
fn retry(args: &AtlasArgs, entries: &[Entry]) -> Result<Vec<Entry>> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.threads.unwrap_or(0)).build()?;
    let settled: Vec<Result<Entry>> = pool.install(|| {
        entries
            .par_iter()
            .map(|e| {
                if !matches!(e.verdict, Verdict::Unknown(_)) {
                    return Ok(e.clone());
                }
                let config = Configuration::leaper(&e.rule, &e.sides)?;
                let verdict = settle(&config, e.closed, args.budget)?;
                eprintln!("atlas: {} {:?} closed={}: {}", e.rule.len(), e.sides, e.closed, verdict.word());
                // Still unknown: the entry keeps what its earlier tries spent.
                if matches!(verdict, Verdict::Unknown(_)) {
                    return Ok(e.clone());
                }
                Ok(Entry { verdict, ..e.clone() })
            })
            .collect()
    });
    settled.into_iter().collect()
}

/// A leaper as the pictures and README name it: `(2,1)`, `(3,0)`,
/// `(2,1) 3D`, `(1,2,2) 3D` (the authors' order for theirs).
fn leaper_name(rule: &[u32], dims: usize) -> String {
    let mut shown = rule.to_vec();
    if shown.len() == 1 && dims == 2 {
        shown.push(0);
    }
    if rule == [2, 2, 1] {
        shown.reverse();
    }
    let text = shown.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    if dims == 2 {
        format!("({text})")
    } else {
        format!("({text}) {dims}D")
    }
}

fn file_name(leaper: &str) -> String {
    leaper.chars().filter(|c| c.is_ascii_alphanumeric() || *c == ',').collect::<String>().replace(',', "-")
}

/// Counts per leaper, for the README.
struct Summary {
    /// Leaper name -> (entries, decided, tours, none).
    per_leaper: BTreeMap<(usize, String), [usize; 4]>,
}

impl Summary {
    fn of(entries: &[Entry]) -> Summary {
        let mut per_leaper = BTreeMap::new();
        for e in entries {
            let key = (e.sides.len(), leaper_name(&e.rule, e.sides.len()));
            let c: &mut [usize; 4] = per_leaper.entry(key).or_default();
            c[0] += 1;
            match e.verdict {
                Verdict::Tour { .. } | Verdict::FromClosed => {
                    c[1] += 1;
                    c[2] += 1
                }
                Verdict::None(_) => {
                    c[1] += 1;
                    c[3] += 1
                }
                Verdict::Unknown(_) => {}
            }
        }
        Summary { per_leaper }
    }

    fn decided(&self) -> usize {
        self.per_leaper.values().map(|c| c[1]).sum()
    }

    fn readme(&self, header: &[String], entries: &[Entry]) -> String {
        let mut s = String::new();
        s.push_str(README_HEAD);
        s.push_str("\n## This build\n\n");
        for h in header {
            s.push_str(&format!("- {h}\n"));
        }
        let total: usize = self.per_leaper.values().map(|c| c[0]).sum();
        s.push_str(&format!(
            "- {total} entries, {} decided ({:.2} %)\n\n## Decided, per leaper\n\n| leaper | entries | decided | tour | none | unknown |\n|---|---|---|---|---|---|\n",
            self.decided(),
            100.0 * self.decided() as f64 / total.max(1) as f64
        ));
        for ((_, name), [n, decided, tours, none]) in &self.per_leaper {
            s.push_str(&format!(
                "| {name} | {n} | {decided} ({:.1} %) | {tours} | {none} | {} |\n",
                100.0 * *decided as f64 / (*n).max(1) as f64,
                n - decided
            ));
        }
        s.push_str("\n## Every unknown, with what was tried\n\n");
        let unknown: Vec<&Entry> = entries.iter().filter(|e| matches!(e.verdict, Verdict::Unknown(_))).collect();
        if unknown.is_empty() {
            s.push_str("None.\n");
        }
        for e in unknown {
            let Verdict::Unknown(tried) = &e.verdict else { continue };
            s.push_str(&format!(
                "- {} {} {}: {tried}\n",
                leaper_name(&e.rule, e.sides.len()),
                e.sides.iter().map(u32::to_string).collect::<Vec<_>>().join("x"),
                if e.closed { "closed" } else { "open" }
            ));
        }
        s
    }
}

/// A leaper's boards: sides -> (open, closed) verdicts.
type Boards<'e> = BTreeMap<Vec<u32>, [Option<&'e Verdict>; 2]>;

/// One picture per leaper: 2D leapers as an m x n grid, 3D ones as one
/// grid of (m, n) per shortest side l.
fn pictures(entries: &[Entry]) -> Vec<(String, AtlasPicture)> {
    let mut by_leaper: BTreeMap<(usize, String), Boards> = BTreeMap::new();
    for e in entries {
        let boards = by_leaper.entry((e.sides.len(), leaper_name(&e.rule, e.sides.len()))).or_default();
        boards.entry(e.sides.clone()).or_default()[usize::from(e.closed)] = Some(&e.verdict);
    }
    by_leaper
        .into_iter()
        .map(|((dims, name), boards)| {
            let cells = boards
                .iter()
                .map(|(sides, [open, closed])| {
                    let class = match (open, closed) {
                        (_, Some(Verdict::Tour { .. })) => AtlasClass::OpenAndClosed,
                        (Some(Verdict::Tour { .. } | Verdict::FromClosed), Some(Verdict::None(_))) => {
                            AtlasClass::OpenOnly
                        }
                        (Some(Verdict::None(_)), Some(Verdict::None(_))) => AtlasClass::None,
                        (Some(Verdict::Tour { .. } | Verdict::FromClosed), _) => AtlasClass::OpenClosedUnknown,
                        _ => AtlasClass::Unknown,
                    };
                    AtlasCell { sides: sides.clone(), class }
                })
                .collect();
            let title = format!("{name} leaper: which boards have tours · knight-sweep atlas");
            (name, AtlasPicture { title, dims, cells })
        })
        .collect()
}

const README_HEAD: &str = "# The atlas of leaper tours

What is decided about open and closed tours of every 2D leaper (a,b) with
0 <= b <= a <= 6 on every m x n board with 1 <= m <= n <= 24, and of the
knight (2,1), the (3,2) leaper and the report authors' (1,2,2) moves on 3D
boxes up to 8x8x8. `ksweep exists` answers from it at once; `ksweep atlas`
made it (the command and build are below) and `ksweep atlas --draw`
redraws this page and the pictures from `atlas.tsv`.

`atlas.tsv` has one line per leaper, board (sides ascending) and kind:

- `tour start=S seed=X budget=B`: `solve` from cell S (row-major, the
  last side fastest) with task seed X and work budget B finds a tour, which
  `tour::verify` checks; a test re-derives every one. `tour closed` on an
  open line: the board's closed tour, its closing step dropped.
- `none P Q`: two methods that share no reasoning each proved there is no
  tour: `argument` (the colour, lattice and move-graph arguments of
  `tour::exists::argued`), `census` (the move graph walked breadth first:
  in pieces, or two classes of sizes a tour cannot alternate between),
  `alternation` (closed: half the cells, no move among them, not a colour
  class, which a closed tour would have to alternate with: Schwenk's 4 x n
  argument made general), `cover` (no cover by cycles), `search:NODES` (the cover-pruned exact
  search or backtracking from every start up to symmetry), `sat:CONFLICTS`
  (the SAT route). The knight's theorems are never used to decide an entry:
  a test holds them against it.
- `unknown ...`: what was tried within the budget.

Leapers are keyed by their entries, descending and without zeros: `3` is
(3,0), `2,2,1` the authors' (1,2,2). A leaper with gcd(a,b) > 1 or a + b
even never leaves a lattice or a colour: no tour on any board of two cells
or more (`argument` and `census`). The null leaper (0,0) is no move set
(`--rule 0,0` is refused) and is not listed: 1x1 is its only board with a
tour.

Pictures (`pictures/`): one per leaper, each m x n board a square coloured
open and closed / open only / none / unknown; 3D leapers one grid per
shortest side.
";

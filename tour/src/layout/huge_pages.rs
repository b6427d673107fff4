//! 2 MiB pages for the large walk buffers, where Linux has them.
//!
//! On a virtual machine a 4 KiB page that a process leaves alone for a
//! moment (a few hundred milliseconds) can cost a fault of the host at its
//! next touch, about 8.5 µs on the Zen 4 VM of docs/performance/engine.md
//! ("Cold pages"): a paused worker's first batch, or a walk buffer of a
//! 300^3 board, pays it for each of thousands of pages. A 2 MiB page pays
//! it once, and needs one entry of the TLB instead of 512.

/// Bytes of a huge page.
const HUGE: usize = 2 << 20;
/// Buffers at least this large are advised: smaller ones hold no whole
/// huge page once aligned inwards.
const FROM: usize = 2 * HUGE;

/// Asks the kernel to back the whole 2 MiB pages inside `cells` with huge
/// pages, now (`MADV_COLLAPSE`, Linux 6.1) and on later faults
/// (`MADV_HUGEPAGE`). Advice only: the contents stay, and where the kernel
/// declines (older kernels, THP off) nothing changes. Returns why the
/// pages were not collapsed now, if they were not (for the tests).
pub(super) fn advise<T>(cells: &[T]) -> Result<(), &'static str> {
    let bytes = std::mem::size_of_val(cells);
    if bytes < FROM || !wanted() {
        return Err("too small, or turned off");
    }
    let first = cells.as_ptr() as usize;
    let (start, end) = (first.next_multiple_of(HUGE), (first + bytes) / HUGE * HUGE);
    madvise(start, end - start)
}

/// Whether `KSWEEP_HUGE_PAGES=0` has not turned the advice off (for
/// timing both ways in one build).
fn wanted() -> bool {
    static WANTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WANTED.get_or_init(|| std::env::var_os("KSWEEP_HUGE_PAGES").is_none_or(|v| v != "0"))
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn madvise(start: usize, len: usize) -> Result<(), &'static str> {
    /// `MADV_COLLAPSE` from the kernel's headers (not in every libc's).
    const MADV_COLLAPSE: libc::c_int = 25;
    // SAFETY: `start..start + len` lies inside one live allocation of
    // ours (huge-page-aligned by construction, `len` > 0); both calls are
    // advice that leaves the contents as they are.
    let collapsed = unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        libc::madvise(start as *mut libc::c_void, len, MADV_COLLAPSE)
    };
    if collapsed == 0 {
        Ok(())
    } else {
        Err("the kernel declined MADV_COLLAPSE")
    }
}

#[cfg(not(target_os = "linux"))]
fn madvise(_: usize, _: usize) -> Result<(), &'static str> {
    Err("not Linux")
}

#[cfg(test)]
mod tests {
    use super::advise;

    /// Huge pages that back `address`'s mapping, in KiB, from
    /// /proc/self/smaps.
    fn anon_huge_kib(address: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("Linux's smaps");
        let mut inside = false;
        for line in smaps.lines() {
            // A mapping's header starts with its range, `start-end` in hex.
            let range = line.split_whitespace().next().and_then(|r| r.split_once('-'));
            if let Some((Ok(a), Ok(b))) =
                range.map(|(a, b)| (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)))
            {
                inside = (a..b).contains(&address);
                continue;
            }
            if let Some(kib) = line.strip_prefix("AnonHugePages:").filter(|_| inside) {
                return kib.trim().trim_end_matches("kB").trim().parse().expect("a size in kB");
            }
        }
        0
    }

    /// An advised buffer keeps its contents, and where the kernel collapses
    /// it, its whole 2 MiB pages are huge ones.
    #[test]
    fn advice_keeps_the_contents_and_takes_huge_pages() {
        let cells: Vec<u32> = (0..3u32 << 20).collect();
        let collapsed = advise(&cells);
        assert!(cells.iter().enumerate().all(|(i, &c)| c == i as u32), "the contents");
        if let Err(why) = collapsed {
            eprintln!("skipped the huge-page check: {why}");
            return;
        }
        // 12 MiB hold at least five whole huge pages, however aligned.
        let kib = anon_huge_kib(cells.as_ptr() as usize + (6 << 20));
        assert!(kib >= 5 * 2048, "{kib} KiB in huge pages");
    }

    /// Small buffers are left alone: none holds a whole huge page for sure.
    #[test]
    fn small_buffers_are_not_advised() {
        assert!(advise(&vec![0u8; 3 << 20]).is_err());
    }
}

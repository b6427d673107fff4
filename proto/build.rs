//! Generates the gRPC code with the protoc shipped in the protoc-bin-vendored
//! crate, so a build needs nothing installed besides cargo.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // Edition 2021: set_var is safe; build scripts are single-threaded.
    std::env::set_var("PROTOC", protoc);
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    tonic_prost_build::configure()
        // Malformed messages are InvalidArgument (see src/codec.rs).
        .codec_path("crate::codec::WireCodec")
        .file_descriptor_set_path(out.join("ksweep_descriptor.bin"))
        .compile_protos(&["ksweep/v1/ksweep.proto"], &["."])?;
    println!("cargo:rerun-if-changed=ksweep/v1/ksweep.proto");
    record_commit();
    Ok(())
}

/// The git commit this build is made from, and whether tracked files
/// differed from it, for the provenance of results (`src/build.rs`). A
/// tree without git (an unpacked crate, an image build that leaves `.git`
/// out) says so, unless KSWEEP_BUILD_COMMIT names the commit.
fn record_commit() {
    println!("cargo:rerun-if-env-changed=KSWEEP_BUILD_COMMIT");
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        // Rebuilt when the commit or the index moves; the dirty flag is as
        // of this crate's last build.
        for file in ["HEAD", "index", "packed-refs"] {
            println!("cargo:rerun-if-changed={dir}/{file}");
        }
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
    }
    let (commit, dirty) = match std::env::var("KSWEEP_BUILD_COMMIT") {
        Ok(commit) if !commit.is_empty() => (commit, false),
        _ => match git(&["rev-parse", "--short=12", "HEAD"]) {
            Some(commit) => {
                let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
                (commit, dirty)
            }
            None => (String::new(), false),
        },
    };
    println!("cargo:rustc-env=KSWEEP_COMMIT={commit}");
    println!("cargo:rustc-env=KSWEEP_DIRTY={}", if dirty { "1" } else { "" });
}

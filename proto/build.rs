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
    Ok(())
}

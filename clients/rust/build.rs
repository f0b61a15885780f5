//! Generates the messages and clients from the crate's own copy of the contract (proto/, made by
//! clients/generate.sh) with a vendored protoc: nothing is needed on the machine but crates.
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("proto");
    // SAFETY: build scripts are single-threaded; prost-build reads PROTOC from the environment.
    unsafe { std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?) };
    let mut files: Vec<PathBuf> = std::fs::read_dir(proto.join("solgate/v1"))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|path| path.extension().is_some_and(|ext| ext == "proto"));
    files.sort();
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_protos(
            &files,
            &[proto.clone(), protoc_bin_vendored::include_path()?],
        )?;
    println!("cargo:rerun-if-changed={}", proto.display());
    Ok(())
}

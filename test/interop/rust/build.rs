//! Generates the Solgate client from the repository's proto/ at build time, with a vendored protoc
//! (no protoc on the machine, nothing downloaded but crates).
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize()?;
    let proto = root.join("proto");
    let google = root.join("third_party/proto");
    // SAFETY: build scripts are single-threaded; prost-build reads PROTOC from the environment.
    unsafe { std::env::set_var("PROTOC", protoc_bin_vendored::protoc_bin_path()?) };
    let files = ["program_service", "fee_service", "transaction_service", "collection_service", "account_service", "wallet_service", "token_service"]
        .map(|name| proto.join(format!("solgate/v1/{name}.proto")));
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        .compile_protos(&files, &[proto.clone(), google, protoc_bin_vendored::include_path()?])?;
    println!("cargo:rerun-if-changed={}", proto.display());
    Ok(())
}

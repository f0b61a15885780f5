//! A Solgate client on the solgate-proto crate (clients/rust: generated from proto/ with tonic and prost) that calls every RPC of
//! every service over gRPC (h2c) against a running server and checks what comes back: auth, error
//! details (`google.rpc.ErrorInfo` via tonic-types), 64-bit fields, enums, timestamps, and a
//! WatchStatus stream followed to its end. It reads what to expect from the environment, as the Go
//! client does (test/interop/go/fixture.go documents the variables). Each check prints `ok NAME`
//! or `FAIL NAME: why`; the last line is `N passed, N failed`; the exit code is 1 on any failure.

mod checks;
mod fixture;
mod localnet;
mod support;
mod wire;

/// The generated messages and clients of package `solgate.v1`.
pub use solgate_proto::pb;

use std::future::Future;
use std::time::Duration;

use tonic::transport::{Channel, Endpoint};

/// Runs named checks and counts the results.
pub struct Suite {
    passed: u32,
    failed: u32,
}

impl Suite {
    /// Runs `check` under `name` with a deadline and prints its outcome.
    pub async fn check<F>(&mut self, name: &str, check: F)
    where
        F: Future<Output = Result<(), String>>,
    {
        let outcome = match tokio::time::timeout(Duration::from_secs(150), check).await {
            Ok(result) => result,
            Err(_) => Err("timed out after 150 s".to_string()),
        };
        match outcome {
            Ok(()) => {
                self.passed += 1;
                println!("ok {name}");
            }
            Err(why) => {
                self.failed += 1;
                println!("FAIL {name}: {why}");
            }
        }
    }
}

/// What every group of checks needs: a channel and the fixture.
pub struct Ctx {
    pub channel: Channel,
    pub fx: fixture::Fixture,
}

impl Ctx {
    /// Wraps `message` in a request that carries the API key.
    pub fn keyed<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        let value = format!("Bearer {}", self.fx.api_key).parse().expect("API key is a valid header value");
        request.metadata_mut().insert("authorization", value);
        request.set_timeout(Duration::from_secs(30));
        request
    }

    /// Whether `service` has not landed yet: its RPCs must then answer Unimplemented.
    /// TODO(interop): the driver's LANDED list shrinks this to nothing as services land.
    pub fn pending(&self, service: &str) -> bool {
        !self.fx.landed.iter().any(|s| s.eq_ignore_ascii_case(service))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let fx = match fixture::Fixture::from_env() {
        Ok(fx) => fx,
        Err(why) => {
            eprintln!("interop: {why}");
            std::process::exit(2);
        }
    };
    // Plain http:// means HTTP/2 with prior knowledge (h2c), as gRPC without TLS does.
    let channel = match Endpoint::from_shared(format!("http://{}", fx.addr)) {
        Ok(endpoint) => endpoint.connect_timeout(Duration::from_secs(10)).connect_lazy(),
        Err(why) => {
            eprintln!("interop: bad SOLGATE_ADDR: {why}");
            std::process::exit(2);
        }
    };
    let ctx = Ctx { channel, fx };
    let mut s = Suite { passed: 0, failed: 0 };
    checks::program::auth(&ctx, &mut s).await;
    checks::program::run(&ctx, &mut s).await;
    checks::fee::run(&ctx, &mut s).await;
    checks::transaction::run(&ctx, &mut s).await;
    checks::bundle::run(&ctx, &mut s).await;
    checks::ladder::run(&ctx, &mut s).await;
    checks::collection::run(&ctx, &mut s).await;
    checks::feed::run(&ctx, &mut s).await;
    checks::webhook::run(&ctx, &mut s).await;
    checks::account::run(&ctx, &mut s).await;
    println!("{} passed, {} failed", s.passed, s.failed);
    if s.failed > 0 {
        std::process::exit(1);
    }
}

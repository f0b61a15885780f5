//! Solgate's contract, package `solgate.v1`, as prost messages and tonic clients (no server code).
//!
//! Every call but health and reflection needs `authorization: Bearer <api key>`: wrap a channel with
//! [`ApiKey`], e.g. `FeeServiceClient::with_interceptor(channel, ApiKey::new(key)?)`. Connect with
//! tonic's `channel` feature (`tonic::transport::Endpoint`); the gateway speaks h2c on `http://`.
//! Error details (`google.rpc.ErrorInfo`, whose `reason` is the gateway's error code) are read with
//! the `tonic-types` crate's `StatusExt`.

/// The generated code, by protobuf package.
pub mod solgate {
    /// Package `solgate.v1`: the messages and a `*_service_client` module per service.
    pub mod v1 {
        tonic::include_proto!("solgate.v1");
    }
}

/// `solgate::v1`, shorter.
pub use solgate::v1 as pb;

use tonic::metadata::{AsciiMetadataValue, errors::InvalidMetadataValue};

/// An interceptor that sends `authorization: Bearer <key>` with every request.
#[derive(Clone, Debug)]
pub struct ApiKey(AsciiMetadataValue);

impl ApiKey {
    /// Fails only if the key has characters a header cannot carry.
    pub fn new(key: &str) -> Result<Self, InvalidMetadataValue> {
        Ok(Self(format!("Bearer {key}").parse()?))
    }
}

impl tonic::service::Interceptor for ApiKey {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

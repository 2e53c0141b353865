//! `cove mcp --http ADDR`: rmcp's streamable HTTP service at `/mcp`, served
//! by the hyper the binary already links (no web framework for one route).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use tokio::net::TcpListener;

use super::{shutdown_signal, CoveMcp, Ctx};

/// Serve until SIGINT/SIGTERM. rmcp's default config accepts only loopback
/// `Host` headers (DNS rebinding), matching the loopback-only bind.
pub async fn serve(addr: SocketAddr, ctx: Arc<Ctx>) -> Result<()> {
    let service = StreamableHttpService::new(
        move || Ok(CoveMcp::new(ctx.clone())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("--http {addr}: cannot listen"))?;
    // Tests and users with port 0 read the address from here.
    eprintln!(
        "cove mcp: serving MCP at http://{}/mcp",
        listener.local_addr()?
    );
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            () = &mut shutdown => return Ok(()),
        };
        let service = service.clone();
        tokio::spawn(async move {
            let route = service_fn(move |req: Request<hyper::body::Incoming>| {
                let service = service.clone();
                async move {
                    if req.uri().path() == "/mcp" {
                        Ok::<_, Infallible>(service.handle(req).await)
                    } else {
                        Ok(not_found())
                    }
                }
            });
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), route)
                .await;
        });
    }
}

fn not_found() -> Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response =
        Response::new(Full::new(Bytes::from_static(b"not found: MCP is at /mcp\n")).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

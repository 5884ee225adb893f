//! The command bridge: a command line that found this server in the data dir runs its
//! archive command here (`POST /api/cli`, its output streamed back as frames), and the
//! files a forwarded import reads are sent first (`POST /api/uploads`).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::filters::ParamError;

use super::error::{ApiError, ApiResult};
use super::jobs::needs_config;
use super::params::{self, Params};
use super::state::AppState;

/// The answer of `POST /api/cli` in the API document.
pub(super) const CLI_ANSWER: &str = "The command was run (or refused as a usage error): its output streams as it is written, \
    `application/x-ndjson`, one JSON value a line, each a `CliFrame`: `{\"stdout\": BASE64}` (bytes of standard output), \
    `{\"stderr\": TEXT}` (messages and warnings), `{\"file\": BASE64}` (bytes of the file `--out` / `--plot` names, \
    for the caller to write; the first, empty, one creates it), the string `\"alive\"` (every 2 s while the command runs: \
    a caller that went away is noticed and the command cancelled), and last `{\"code\": N}`, the exit code \
    (0 success, 1 error, 2 usage: the arguments do not parse or name no archive command); nothing follows it. \
    The status is 200 whatever the exit code; an answer that ends without a `code` line was cut off (the server stopped).";

/// `POST /api/cli`: a command line found this server in the data dir. The
/// answer streams the command's output as [`crate::remote::CliFrame`] lines
/// while it runs and ends with its exit code.
pub(super) async fn cli_command(
    State(state): State<Arc<AppState>>,
    Json(req): Json<crate::remote::CliRequest>,
) -> ApiResult<Response> {
    use crate::remote::{CliFrame, FrameWriter};
    use clap::Parser;
    let cfg = needs_config(&state)?;
    let refused = |text: String| {
        let mut body = CliFrame::Stderr(text).line();
        body.extend(CliFrame::Code(2).line());
        Ok(frames_response(Body::from(body)))
    };
    let mut parsed = match crate::cli::Cli::try_parse_from(
        std::iter::once("harvest".to_string()).chain(req.args),
    ) {
        Ok(c) => c,
        Err(e) => return refused(e.render().to_string()),
    };
    if !parsed.command.uses_archive() {
        return refused(format!(
            "harvest: error: only {} run through the server\n",
            crate::commands::archive_commands_listed()
        ));
    }
    // The server reads no path a request names: a forwarded import reads
    // the files its caller sent to the upload route.
    let mut uploads = Vec::new();
    if let crate::cli::Command::Import(args) = &mut parsed.command {
        for file in &mut args.files {
            let named = file.to_string_lossy().into_owned();
            match crate::remote::upload_path(&cfg.data_dir, &named).filter(|p| p.is_file()) {
                Some(path) => {
                    if let Some(dir) = path.parent() {
                        uploads.push(dir.to_path_buf());
                    }
                    *file = path;
                }
                None => {
                    return refused(format!(
                        "harvest: error: {named}: the server imports only files sent to it first ({}; the command line does this)\n",
                        crate::remote::UPLOAD_ROUTE
                    ))
                }
            }
        }
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<CliFrame>(8);
    // A crawl or job run forwarded without --quiet shows its progress lines.
    let progress = if parsed.command.quiet() {
        crate::ingest::Progress::Quiet
    } else {
        let lines = tx.clone();
        crate::ingest::Progress::To(crate::ingest::LineSink::new(move |line| {
            crate::remote::send_line(&lines, line)
        }))
    };
    // The caller going away (killed, interrupted, its connection lost) drops
    // the answer's receiver: that cancels the command (a crawl stores what it
    // fetched, keeps its queue and is recorded `cancelled`; its next run takes
    // it up). Alive frames find a lost caller of a command that writes nothing.
    let cancel = crawler::CancellationToken::new();
    let finished = crawler::CancellationToken::new();
    // Ended (and awaited) before the exit code is sent: nothing follows the code.
    let alive_frames = {
        let (tx, cancel, finished) = (tx.clone(), cancel.clone(), finished.clone());
        tokio::spawn(async move {
            let mut alive = tokio::time::interval(crate::remote::ALIVE_EVERY);
            alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    _ = finished.cancelled() => return,
                    _ = tx.closed() => {
                        tracing::info!("the caller of a forwarded command went away: cancelling it");
                        cancel.cancel();
                        return;
                    }
                    _ = alive.tick() => {
                        let _ = tx.try_send(CliFrame::Alive);
                    }
                }
            }
        })
    };
    tokio::spawn(async move {
        let mut out = FrameWriter::stdout(tx.clone());
        let mut err = FrameWriter::stderr(tx.clone());
        let files = {
            let tx = tx.clone();
            crate::outfile::Files::Caller(Box::new(move || -> Box<dyn crate::outfile::OutFile> {
                Box::new(FrameWriter::file(tx.clone()))
            }))
        };
        let result = crate::commands::run(
            &parsed.command,
            &cfg,
            &state.stores,
            &mut out,
            &mut err,
            &files,
            progress,
            cancel,
        )
        .await;
        drop((out, err, files));
        for dir in uploads {
            let _ = std::fs::remove_dir_all(dir);
        }
        let chosen = result
            .as_ref()
            .err()
            .and_then(|e| e.downcast_ref::<crate::commands::Exit>())
            .map(|x| x.0);
        let code = match (result, chosen) {
            (Ok(()), _) => 0,
            // An exit code the command chose (fsck finding damage): its
            // report is its message ("harvest: error: exit code 1" was sent).
            (Err(_), Some(code)) => code,
            (Err(e), None) => {
                let mut msg = format!("harvest: error: {e}\n");
                for cause in e.chain().skip(1) {
                    msg.push_str(&format!("  caused by: {cause}\n"));
                }
                let _ = tx.send(CliFrame::Stderr(msg)).await;
                1
            }
        };
        finished.cancel();
        let _ = alive_frames.await;
        let _ = tx.send(CliFrame::Code(code)).await;
    });
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        let frame = rx.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(frame.line()), rx))
    });
    Ok(frames_response(Body::from_stream(frames)))
}

/// How long an uploaded file no import took is kept (a caller or server
/// that died between the upload and the command).
const STALE_UPLOAD: Duration = Duration::from_secs(24 * 3600);

/// Removes uploads older than [`STALE_UPLOAD`].
pub(super) fn remove_stale_uploads(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_UPLOAD);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A file kept for a forwarded import.
#[derive(Serialize, ToSchema)]
#[schema(as = Upload)]
pub(super) struct Uploaded {
    /// Bytes kept.
    bytes: u64,
    /// How a forwarded import names the file: `upload:ID/NAME`.
    upload: String,
}

/// `POST /api/uploads?name=NAME`: the body (any size, streamed to disk) is
/// kept in the data dir's upload folder for a forwarded `import`, which
/// names it by the answer's `upload` (`upload:ID/NAME`); the import removes
/// it when it ends.
pub(super) async fn upload(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<(StatusCode, Json<Uploaded>)> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let cfg = needs_config(&state)?;
    let p = Params::parse(raw.as_deref(), &[params::UPLOAD_PARAMS])?;
    let name = p
        .one("name")
        .filter(|n| crate::remote::plain_file_name(n))
        .ok_or_else(|| ParamError::new("name", "a plain file name is required"))?
        .to_string();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let dir = cfg.data_dir.join(crate::remote::UPLOAD_DIR).join(&id);
    tokio::fs::create_dir_all(&dir)
        .await
        .with_context(|| format!("creating {}", dir.display()))
        .map_err(ApiError::internal)?;
    let path = dir.join(&name);
    let written = async {
        let mut file = tokio::fs::File::create(&path)
            .await
            .with_context(|| format!("creating {}", path.display()))?;
        let mut stream = body.into_data_stream();
        let mut bytes = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.context("reading the upload")?;
            bytes += chunk.len() as u64;
            file.write_all(&chunk)
                .await
                .with_context(|| format!("writing {}", path.display()))?;
        }
        file.sync_all()
            .await
            .with_context(|| format!("writing {}", path.display()))?;
        anyhow::Ok(bytes)
    }
    .await;
    match written {
        Ok(bytes) => Ok((
            StatusCode::CREATED,
            Json(Uploaded {
                bytes,
                upload: format!("{}{id}/{name}", crate::remote::UPLOAD_PREFIX),
            }),
        )),
        Err(e) => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(ApiError::internal(e))
        }
    }
}

/// An answer of command frames (JSON lines).
fn frames_response(body: Body) -> Response {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    resp
}

//! The WebHDFS fallback: synced bytes of a block another process is still writing, which
//! hdfs-native cannot read, asked of the NameNode's web server over plain HTTP (see the
//! module docs of [`crate::store::hdfs`]).

use hdfs_native::HdfsError;

use crate::error::{Error, Result};

use super::client::Inner;

/// WebHDFS path prefix on the NameNode's web server.
const WEBHDFS_PREFIX: &str = "webhdfs/v1";
/// Environment variable with the HDFS user (also hdfs-native's choice).
const HADOOP_USER_ENV: &str = "HADOOP_USER_NAME";

impl Inner {
    /// Reads `offset..offset+len` (synced bytes of a block another client is writing) over
    /// WebHDFS; [`Error::NotYetReadable`] (with `readable`, the bytes hdfs-native can read)
    /// without a WebHDFS address or when the DataNode serves fewer bytes.
    pub(super) fn read_webhdfs(
        &self,
        path: &str,
        full: &str,
        offset: u64,
        len: u64,
        readable: u64,
    ) -> Result<Vec<u8>> {
        let end = offset.saturating_add(len);
        let not_yet = |readable: u64| Error::NotYetReadable {
            path: path.to_string(),
            offset,
            end,
            readable,
        };
        let (Some(web), Some(http)) = (&self.options.webhdfs, &self.http) else {
            return Err(not_yet(readable));
        };
        let failed = |reason: String| Error::Hdfs {
            op: "webhdfs read",
            path: path.to_string(),
            source: HdfsError::OperationFailed(reason),
        };
        let mut url = reqwest::Url::parse(&format!("http://{web}/"))
            .map_err(|e| failed(format!("bad WebHDFS address {web:?}: {e}")))?;
        url.path_segments_mut()
            .map_err(|()| failed(format!("bad WebHDFS address {web:?}")))?
            .pop_if_empty()
            .extend(WEBHDFS_PREFIX.split('/'))
            .extend(full.trim_start_matches('/').split('/'));
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("op", "OPEN")
                .append_pair("offset", &offset.to_string())
                .append_pair("length", &len.to_string());
            let user = self
                .options
                .user
                .clone()
                .or_else(|| std::env::var(HADOOP_USER_ENV).ok())
                .or_else(|| std::env::var("USER").ok());
            if let Some(user) = user {
                query.append_pair("user.name", &user);
            }
        }
        let Some(rt) = self.runtime.as_ref() else {
            return Err(Error::AsyncContext { op: "webhdfs read" });
        };
        let deadline = self.options.call_timeout;
        let answer = rt.block_on(async {
            tokio::time::timeout(deadline, async {
                // Built inside the runtime: reqwest's connector needs its reactor.
                let response = http.get(url.clone()).send().await?;
                let status = response.status();
                let body = response.bytes().await?;
                Ok::<_, reqwest::Error>((status, body))
            })
            .await
        });
        let (status, body) = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return Err(failed(format!("GET {url}: {e}"))),
            Err(_) => {
                return Err(Error::Timeout {
                    op: "webhdfs read",
                    path: path.to_string(),
                    after: deadline,
                })
            }
        };
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(Error::NotFound {
                path: path.to_string(),
            });
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)]).to_string();
            return Err(failed(format!("GET {url}: {status}: {text}")));
        }
        if body.len() as u64 != len {
            // The DataNode's visible length ends earlier than the NameNode's synced length.
            return Err(not_yet(offset + (body.len() as u64).min(len)));
        }
        tracing::debug!(
            path,
            offset,
            len,
            "read synced bytes of an open block over WebHDFS"
        );
        Ok(body.to_vec())
    }
}

//! The live view's WebSocket server: the Foxglove WebSocket protocol (v1, the spec at
//! github.com/foxglove/ws-protocol), served by morc itself so that the handshake can say who may
//! connect. The `foxglove` SDK's own server takes any Origin and any Host and has no hook to
//! look at the handshake; its protocol types (`foxglove::ws_protocol`) are what this server
//! speaks, and `tokio-tungstenite` does the WebSocket framing.
//!
//! - **Handshake**: the Host header must name the address served, the Origin must be none,
//!   Foxglove's app or the operator page ([`Access::check_live_origin`]), and off loopback the
//!   token must come with it (`?token=` in the URL or the `X-Morc-Token` header); else HTTP 403
//!   and nothing of the robot is sent. The `foxglove.sdk.v1` subprotocol (or the older
//!   `foxglove.websocket.v1`, the same messages) must be offered.
//! - **What it serves**: serverInfo (capabilities `parameters` and `parametersSubscribe`),
//!   advertise (every channel, then each new one), subscribe/unsubscribe, binary messageData
//!   with the sender's log time, getParameters/setParameters (read-only) and parameter updates,
//!   latched messages (the last one of a latched topic goes to each new subscriber), status
//!   messages for what a client asked wrong or missed.
//! - **Bounded**: at most [`MAX_CLIENTS`] clients and [`MAX_CONNECTIONS`] open connections
//!   (handshakes that do not finish in [`HANDSHAKE_TIMEOUT`] are closed); each client has a queue
//!   of [`DATA_QUEUE`] messages: when a client reads too slowly its messages are dropped and
//!   counted, and the thread that sends (the live taps' drain) never waits for a client.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use foxglove::ws_protocol::client::ClientMessage;
use foxglove::ws_protocol::parameter::Parameter;
use foxglove::ws_protocol::schema::Schema;
use foxglove::ws_protocol::server::server_info::Capability;
use foxglove::ws_protocol::server::{Advertise, Channel, MessageData, ParameterValues, ServerInfo, Status};
use futures_util::{SinkExt, StreamExt};
use tokio::sync::{mpsc, watch, Notify};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;

use crate::access::{Access, Refusal, TOKEN_HEADER, TOKEN_QUERY};
use crate::lock;

/// The subprotocols served, preferred first: `foxglove.sdk.v1` (Foxglove's app and SDK clients)
/// and its older name `foxglove.websocket.v1` (the same messages; older bridges and clients).
pub const SUBPROTOCOLS: &[&str] = &["foxglove.sdk.v1", "foxglove.websocket.v1"];
/// Clients connected at once; one more is answered 503.
pub const MAX_CLIENTS: usize = 16;
/// TCP connections open at once (handshaking or connected); one more is closed at once.
pub const MAX_CONNECTIONS: usize = 2 * MAX_CLIENTS;
/// How long a connection may take to finish its handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Messages queued for one client (about 2 s of a robot's channels at 100 rows a second); when
/// full, new ones are dropped for that client and counted.
pub const DATA_QUEUE: usize = 1024;
/// Replies and advertisements queued for one client; a client that lets this fill up does not
/// read at all and is disconnected.
const CONTROL_QUEUE: usize = 256;
/// The largest message a client may send (its requests are small JSON).
const MAX_CLIENT_MESSAGE: usize = 1 << 20;

/// A running server: its thread serves every connection (a tokio runtime of one thread).
pub struct WsServer {
    shared: Arc<Shared>,
    shutdown: watch::Sender<Option<Duration>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What the server's thread and the senders share.
struct Shared {
    access: Arc<Access>,
    port: u16,
    session: String,
    channels: Mutex<Channels>,
    clients: Mutex<Vec<Arc<Peer>>>,
    parameters: Mutex<BTreeMap<String, Parameter>>,
    /// Connections open now (handshaking or connected).
    connections: AtomicUsize,
    /// Messages dropped for clients that read too slowly, over every client.
    unsent: AtomicU64,
    /// Handshakes refused (the first is logged, then every hundredth).
    refused: AtomicU64,
    next_client: AtomicU64,
}

#[derive(Default)]
struct Channels {
    list: Vec<ChannelState>,
    by_topic: HashMap<String, usize>,
}

struct ChannelState {
    advert: Channel<'static>,
    /// The last message of a latched topic, for each new subscriber (payload, log time).
    latched: Option<(Arc<[u8]>, u64)>,
    /// Subscribed clients and their subscription ids.
    subscribers: Vec<(Arc<Peer>, u32)>,
}

/// One connected client, as the senders see it.
struct Peer {
    id: u64,
    control: mpsc::Sender<Message>,
    data: mpsc::Sender<Message>,
    /// Messages dropped for this client (its queue was full).
    dropped: AtomicU64,
    /// Parameters whose updates it asked for.
    parameter_updates: Mutex<Vec<String>>,
    /// Woken when the client must go (its control queue overflowed).
    kick: Notify,
}

impl Peer {
    fn push_control(&self, message: Message) {
        if self.control.try_send(message).is_err() {
            self.kick.notify_one();
        }
    }

    fn push_data(&self, message: Message, shared: &Shared) {
        if self.data.try_send(message).is_ok() {
            return;
        }
        let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
        shared.unsent.fetch_add(1, Ordering::Relaxed);
        // Tell the client, at 1, 10, 100, … drops: it knows its view has gaps and why.
        if dropped == 10u64.pow(dropped.ilog10()) {
            let status = Status::warning(format!("morc: this client reads too slowly; {dropped} messages were dropped for it so far (the robot is not slowed)")).with_id("morc.dropped");
            self.push_control(Message::from(&status));
        }
    }
}

impl WsServer {
    /// Serves on `listener` (bound, blocking or not) with the access policy `access`.
    pub fn start(listener: std::net::TcpListener, access: Arc<Access>) -> std::io::Result<WsServer> {
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let shared = Arc::new(Shared {
            access,
            port,
            session: format!("morc-{}-{}", std::process::id(), now.as_nanos()),
            channels: Mutex::new(Channels::default()),
            clients: Mutex::new(Vec::new()),
            parameters: Mutex::new(BTreeMap::new()),
            connections: AtomicUsize::new(0),
            unsent: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            next_client: AtomicU64::new(1),
        });
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (shutdown, stopped) = watch::channel(None);
        let serving = shared.clone();
        let thread = std::thread::Builder::new().name("live-ws".into()).spawn(move || {
            runtime.block_on(async move {
                match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => accept_loop(serving, listener, stopped).await,
                    Err(e) => log::error!("live view: cannot serve: {e}"),
                }
            });
            // Dropping the runtime ends what still runs (clients that did not flush in time).
        })?;
        Ok(WsServer { shared, shutdown, thread: Some(thread) })
    }

    /// The port served.
    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// Clients connected now.
    pub fn client_count(&self) -> usize {
        lock(&self.shared.clients).len()
    }

    /// Whether any client is subscribed to any channel.
    pub fn subscribed(&self) -> bool {
        lock(&self.shared.channels).list.iter().any(|c| !c.subscribers.is_empty())
    }

    /// Messages dropped for clients that read too slowly, since the server started.
    pub fn unsent(&self) -> u64 {
        self.shared.unsent.load(Ordering::Relaxed)
    }

    /// Advertises `topic` (JSON messages of the schema `schema_name`, described by `schema` as
    /// jsonschema), unless it is already.
    pub fn advertise(&self, topic: &str, schema_name: &str, schema: &str) {
        let mut channels = lock(&self.shared.channels);
        self.shared.channel_index(&mut channels, topic, schema_name, schema);
    }

    /// Sends `payload` on `topic` (advertised first if new) to every client subscribed, stamped
    /// `log_time` (nanoseconds since the Unix epoch). Never waits for a client.
    pub fn send(&self, topic: &str, schema_name: &str, schema: impl FnOnce() -> String, payload: &[u8], log_time: u64) {
        let mut channels = lock(&self.shared.channels);
        if let Some(i) = channels.by_topic.get(topic).copied() {
            self.shared.fan_out(&channels.list[i], payload, log_time);
            return;
        }
        let i = self.shared.channel_index(&mut channels, topic, schema_name, &schema());
        self.shared.fan_out(&channels.list[i], payload, log_time);
    }

    /// Sends `payload` on `topic` as [`send`](Self::send) does and keeps it: each client that
    /// subscribes later gets it as it subscribes.
    pub fn send_latched(&self, topic: &str, schema_name: &str, schema: &str, payload: &[u8], log_time: u64) {
        let mut channels = lock(&self.shared.channels);
        let i = self.shared.channel_index(&mut channels, topic, schema_name, schema);
        let channel = &mut channels.list[i];
        channel.latched = Some((Arc::from(payload), log_time));
        self.shared.fan_out(channel, payload, log_time);
    }

    /// Sets a parameter (read-only for clients) and sends it to the clients that asked for its updates.
    pub fn set_parameter(&self, parameter: Parameter) {
        let name = parameter.name.clone();
        lock(&self.shared.parameters).insert(name.clone(), parameter.clone());
        let update = Message::from(&ParameterValues::new([parameter]));
        for peer in lock(&self.shared.clients).iter() {
            if lock(&peer.parameter_updates).contains(&name) {
                peer.push_control(update.clone());
            }
        }
    }

    /// Stops serving: no new connection; each client gets what is queued for it (at most
    /// `linger`) and a close; then the thread ends.
    pub fn stop(&mut self, linger: Duration) {
        if let Some(thread) = self.thread.take() {
            let _ = self.shutdown.send(Some(linger));
            let _ = thread.join();
        }
    }
}

impl Drop for WsServer {
    fn drop(&mut self) {
        self.stop(Duration::ZERO);
    }
}

async fn accept_loop(shared: Arc<Shared>, listener: tokio::net::TcpListener, mut stopped: watch::Receiver<Option<Duration>>) {
    let mut clients = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = stopped.changed() => break,
            accepted = listener.accept() => {
                let Ok((stream, from)) = accepted else { continue };
                if shared.connections.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
                    shared.connections.fetch_sub(1, Ordering::AcqRel);
                    drop(stream);
                    continue;
                }
                let _ = stream.set_nodelay(true);
                clients.spawn(serve_connection(shared.clone(), stream, from, stopped.clone()));
            }
            // Reap finished clients as they end, so the set stays small.
            Some(_) = clients.join_next(), if !clients.is_empty() => {}
        }
    }
    drop(listener);
    // Each client flushes what is queued for it and closes; those that cannot in time are cut.
    let linger = stopped.borrow().unwrap_or_default();
    let _ = tokio::time::timeout(linger, async { while clients.join_next().await.is_some() {} }).await;
    clients.abort_all();
}

/// Decrements the count of open connections when a connection ends, however it ends.
struct Open(Arc<Shared>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

async fn serve_connection(shared: Arc<Shared>, stream: tokio::net::TcpStream, from: std::net::SocketAddr, mut stopped: watch::Receiver<Option<Duration>>) {
    let _open = Open(shared.clone());
    let config = WebSocketConfig::default().max_message_size(Some(MAX_CLIENT_MESSAGE)).max_frame_size(Some(MAX_CLIENT_MESSAGE));
    let checker = shared.clone();
    // tungstenite's callback signature: the refusal is an HTTP response, not ours to shrink.
    #[allow(clippy::result_large_err)]
    let callback = move |request: &Request, response: Response| check_handshake(&checker, request, response);
    let mut ws = match tokio::time::timeout(HANDSHAKE_TIMEOUT, tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config))).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            let n = shared.refused.fetch_add(1, Ordering::Relaxed);
            if n.is_multiple_of(100) {
                log::warn!("live view: refused a connection from {from}: {e}{}", if n > 0 { format!(" ({} refused so far)", n + 1) } else { String::new() });
            }
            return;
        }
        Err(_) => return,
    };

    let (control_tx, mut control) = mpsc::channel(CONTROL_QUEUE);
    let (data_tx, mut data) = mpsc::channel(DATA_QUEUE);
    let peer = Arc::new(Peer {
        id: shared.next_client.fetch_add(1, Ordering::Relaxed),
        control: control_tx,
        data: data_tx,
        dropped: AtomicU64::new(0),
        parameter_updates: Mutex::new(Vec::new()),
        kick: Notify::new(),
    });
    // serverInfo, then every channel; registered under the channels' lock, so that a channel
    // added meanwhile is advertised after these (through the queue).
    let mut info = ServerInfo::new("morc");
    info.capabilities = vec![Capability::Parameters, Capability::ParametersSubscribe];
    info.session_id = Some(shared.session.clone());
    let advertise = {
        let channels = lock(&shared.channels);
        lock(&shared.clients).push(peer.clone());
        Message::from(&Advertise::new(channels.list.iter().map(|c| c.advert.clone())))
    };
    let mut open = ws.send(Message::from(&info)).await.is_ok() && ws.send(advertise).await.is_ok();

    while open {
        tokio::select! {
            biased;
            _ = stopped.changed() => {
                // Stopping: what is queued goes out, then a close.
                while let Ok(m) = control.try_recv() {
                    let _ = ws.feed(m).await;
                }
                while let Ok(m) = data.try_recv() {
                    let _ = ws.feed(m).await;
                }
                let _ = ws.close(None).await;
                open = false;
            }
            _ = peer.kick.notified() => open = false,
            Some(m) = control.recv() => open = ws.send(m).await.is_ok(),
            Some(m) = data.recv() => open = ws.send(m).await.is_ok(),
            incoming = ws.next() => match incoming {
                Some(Ok(Message::Text(text))) => shared.handle(&peer, &text),
                Some(Ok(Message::Binary(_))) => peer.push_control(Message::from(&Status::error("morc's live view takes no client messages on channels (no clientPublish)"))),
                // Pings are answered by the WebSocket layer.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Close(_)) | Err(_)) | None => open = false,
            },
        }
    }
    shared.forget(&peer);
}

/// The handshake's check: Host, Origin, the token off loopback, the subprotocol, the client limit.
#[allow(clippy::result_large_err)] // the refusal is tungstenite's HTTP response type
fn check_handshake(shared: &Shared, request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
    let refuse = |status: u16, why: String| -> ErrorResponse {
        let mut r = ErrorResponse::new(Some(format!("{why}\n")));
        *r.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::from_u16(status).unwrap_or_default();
        r.headers_mut().insert("content-type", HeaderValue::from_static("text/plain; charset=utf-8"));
        r
    };
    let access = &shared.access;
    let host = header("host");
    access.check_host(host, shared.port).map_err(|r| refuse(403, r.to_string()))?;
    if let Err(Refusal::Origin(origin)) = access.check_live_origin(header("origin"), host) {
        return Err(refuse(403, format!("a page from '{origin}' may not open the live view: only Foxglove's app ({}) and the operator page may", crate::access::FOXGLOVE_ORIGINS.join(", "))));
    }
    let token = header(TOKEN_HEADER).or_else(|| query_token(request.uri().query()));
    if !access.may_read(token) {
        return Err(refuse(403, format!("the live view is served beyond this machine: connect with the token morc printed (ws://…/?{TOKEN_QUERY}=…, or the {TOKEN_HEADER} header)")));
    }
    let offered: Vec<&str> = request.headers().get_all("sec-websocket-protocol").iter().flat_map(|h| h.to_str().unwrap_or_default().split(',')).map(str::trim).collect();
    let Some(subprotocol) = SUBPROTOCOLS.iter().find(|p| offered.contains(p)) else {
        return Err(refuse(400, format!("offer the Foxglove WebSocket subprotocol ({}) in Sec-WebSocket-Protocol", SUBPROTOCOLS.join(" or "))));
    };
    if lock(&shared.clients).len() >= MAX_CLIENTS {
        return Err(refuse(503, format!("the live view serves {MAX_CLIENTS} clients at most; try again when one has gone")));
    }
    response.headers_mut().insert("sec-websocket-protocol", HeaderValue::from_static(subprotocol));
    Ok(response)
}

/// The `token` of a URL's query ("token=…&…"); tokens are URL-safe, so nothing is decoded.
fn query_token(query: Option<&str>) -> Option<&str> {
    query?.split('&').find_map(|kv| kv.strip_prefix(TOKEN_QUERY)?.strip_prefix('='))
}

impl Shared {
    /// The index of `topic`'s channel, advertised to every client when new.
    fn channel_index(&self, channels: &mut Channels, topic: &str, schema_name: &str, schema: &str) -> usize {
        if let Some(i) = channels.by_topic.get(topic) {
            return *i;
        }
        let id = channels.list.len() as u64 + 1;
        let advert = Channel::builder(id, topic.to_string(), "json")
            .with_schema(Schema::new(schema_name.to_string(), "jsonschema", schema.as_bytes().to_vec()))
            .build()
            // jsonschema is text: nothing to encode, nothing can fail; a channel without a schema still serves.
            .unwrap_or_else(|_| Channel {
                id,
                topic: topic.to_string().into(),
                encoding: "json".into(),
                schema_name: schema_name.to_string().into(),
                schema_encoding: None,
                schema: "".into(),
                metadata: BTreeMap::new(),
            });
        let message = Message::from(&Advertise::new([advert.clone()]));
        for peer in lock(&self.clients).iter() {
            peer.push_control(message.clone());
        }
        channels.list.push(ChannelState { advert, latched: None, subscribers: Vec::new() });
        channels.by_topic.insert(topic.to_string(), channels.list.len() - 1);
        channels.list.len() - 1
    }

    fn fan_out(&self, channel: &ChannelState, payload: &[u8], log_time: u64) {
        for (peer, subscription) in &channel.subscribers {
            let message = Message::from(&MessageData::new(*subscription, log_time, payload));
            peer.push_data(message, self);
        }
    }

    /// A client's request.
    fn handle(&self, peer: &Arc<Peer>, text: &str) {
        let status = |s: Status| peer.push_control(Message::from(&s));
        let message = match ClientMessage::parse_json(text) {
            Ok(m) => m,
            Err(e) => return status(Status::error(format!("morc's live view cannot read this message: {e}"))),
        };
        match message {
            ClientMessage::Subscribe(s) => {
                let mut channels = lock(&self.channels);
                for sub in s.subscriptions {
                    let taken = channels.list.iter().any(|c| c.subscribers.iter().any(|(p, id)| p.id == peer.id && *id == sub.id));
                    let Some(channel) = channels.list.get_mut((sub.channel_id as usize).wrapping_sub(1)) else {
                        status(Status::error(format!("no channel {} to subscribe to", sub.channel_id)));
                        continue;
                    };
                    if taken {
                        status(Status::error(format!("subscription id {} is in use already", sub.id)));
                        continue;
                    }
                    channel.subscribers.push((peer.clone(), sub.id));
                    // A latched topic's last message, for this subscriber only.
                    if let Some((payload, log_time)) = &channel.latched {
                        peer.push_control(Message::from(&MessageData::new(sub.id, *log_time, &payload[..])));
                    }
                }
            }
            ClientMessage::Unsubscribe(u) => {
                let mut channels = lock(&self.channels);
                for c in channels.list.iter_mut() {
                    c.subscribers.retain(|(p, id)| !(p.id == peer.id && u.subscription_ids.contains(id)));
                }
            }
            ClientMessage::GetParameters(g) => {
                let parameters = lock(&self.parameters);
                let values = parameters.values().filter(|p| g.parameter_names.is_empty() || g.parameter_names.contains(&p.name)).cloned();
                let mut reply = ParameterValues::new(values);
                reply.id = g.id;
                peer.push_control(Message::from(&reply));
            }
            ClientMessage::SetParameters(s) => {
                status(Status::warning("morc's parameters are read-only: /robot_description is the running robot's"));
                if let Some(id) = s.id {
                    let parameters = lock(&self.parameters);
                    let values = s.parameters.iter().filter_map(|p| parameters.get(&p.name).cloned());
                    peer.push_control(Message::from(&ParameterValues::new(values).with_id(id)));
                }
            }
            ClientMessage::SubscribeParameterUpdates(s) => {
                let mut wanted = lock(&peer.parameter_updates);
                for name in s.parameter_names {
                    if !wanted.contains(&name) {
                        wanted.push(name);
                    }
                }
            }
            ClientMessage::UnsubscribeParameterUpdates(u) => lock(&peer.parameter_updates).retain(|n| !u.parameter_names.contains(n)),
            other => status(Status::error(format!("morc's live view does not serve {}", request_name(&other)))),
        }
    }

    /// Forgets a client that has gone: its subscriptions, its place among the clients.
    fn forget(&self, peer: &Arc<Peer>) {
        for c in lock(&self.channels).list.iter_mut() {
            c.subscribers.retain(|(p, _)| p.id != peer.id);
        }
        lock(&self.clients).retain(|p| p.id != peer.id);
    }
}

/// The name of a request this server does not serve, for the status that says so.
fn request_name(message: &ClientMessage) -> &'static str {
    match message {
        ClientMessage::Advertise(_) | ClientMessage::Unadvertise(_) | ClientMessage::MessageData(_) => "client publishing",
        ClientMessage::ServiceCallRequest(_) => "services",
        ClientMessage::SubscribeConnectionGraph | ClientMessage::UnsubscribeConnectionGraph => "the connection graph",
        ClientMessage::FetchAsset(_) => "assets",
        _ => "this request",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_found_in_the_query() {
        assert_eq!(query_token(Some("token=abc")), Some("abc"));
        assert_eq!(query_token(Some("x=1&token=abc&y=2")), Some("abc"));
        assert_eq!(query_token(Some("tokens=abc")), None);
        assert_eq!(query_token(None), None);
    }
}

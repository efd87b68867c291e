//! An in-process transport between an ethercrab `MainDevice` and a virtual [`Segment`]: no
//! sockets, no threads, no timers of its own. Frames that ethercrab queues are taken from its
//! `PduTx`, passed through the segment, and the replies handed to its `PduRx` in the same poll,
//! so the exchange is deterministic.

use crate::sii_coe_mask::SiiCoeMask;
use ethercrab::{PduRx, PduTx};
use morc_ecat_sim::Segment;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

/// The segment, shared between the transport and whoever inspects or steps it.
pub type SharedSegment = Arc<Mutex<Segment>>;

/// Locks a shared segment; a poisoned lock (a panic elsewhere) still gives the segment.
pub fn lock(segment: &SharedSegment) -> MutexGuard<'_, Segment> {
    segment.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Largest frame handled: a standard Ethernet frame without FCS.
pub(crate) const MAX_FRAME_LEN: usize = 1514;

/// Counts of what went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransportCounters {
    /// Frames passed to the segment.
    pub frames_sent: u64,
    /// Replies ethercrab accepted.
    pub frames_received: u64,
    /// Frames the segment refused as malformed (no reply: ethercrab times them out).
    pub frames_dropped: u64,
    /// Replies ethercrab did not accept.
    pub receive_errors: u64,
}

/// Connects ethercrab's PDU loop to a segment.
pub struct InProcessTransport<'sto> {
    tx: PduTx<'sto>,
    rx: PduRx<'sto>,
    segment: SharedSegment,
    /// Preallocated reply buffer: cyclic exchange allocates nothing.
    reply: Box<[u8; MAX_FRAME_LEN]>,
    counters: TransportCounters,
    /// Devices whose CoE the master is not to see (see [`SiiCoeMask`]).
    sii_mask: SiiCoeMask,
}

impl<'sto> InProcessTransport<'sto> {
    /// A transport passing the frames of ethercrab's `tx`/`rx` through `segment`.
    pub fn new(tx: PduTx<'sto>, rx: PduRx<'sto>, segment: SharedSegment) -> Self {
        Self { tx, rx, segment, reply: Box::new([0; MAX_FRAME_LEN]), counters: TransportCounters::default(), sii_mask: SiiCoeMask::default() }
    }

    /// Hides CoE from the master for the devices `mask` names.
    pub(crate) fn set_sii_mask(&mut self, mask: SiiCoeMask) {
        self.sii_mask = mask;
    }

    /// What went through so far.
    pub fn counters(&self) -> TransportCounters {
        self.counters
    }

    /// The segment frames go through.
    pub fn segment(&self) -> &SharedSegment {
        &self.segment
    }

    /// Passes every frame ethercrab has queued through the segment and delivers the replies.
    /// Returns the number of frames exchanged.
    pub(crate) fn pump(&mut self) -> usize {
        let mut exchanged = 0;
        while let Some(frame) = self.tx.next_sendable_frame() {
            let segment = &self.segment;
            let reply = &mut self.reply[..];
            let mut reply_len = None;
            let mask = &mut self.sii_mask;
            let sent = frame.send_blocking(|bytes| {
                mask.outgoing(bytes);
                if let Ok(len) = lock(segment).process_frame(bytes, reply) {
                    mask.reply(&mut reply[..len]);
                    reply_len = Some(len);
                }
                // The frame went onto the "wire" whatever the segment made of it.
                Ok(bytes.len())
            });
            if sent.is_err() {
                self.counters.frames_dropped += 1;
                continue;
            }
            self.counters.frames_sent += 1;
            exchanged += 1;
            match reply_len {
                Some(len) => match self.rx.receive_frame(&self.reply[..len]) {
                    Ok(_) => self.counters.frames_received += 1,
                    Err(_) => self.counters.receive_errors += 1,
                },
                None => self.counters.frames_dropped += 1,
            }
        }
        exchanged
    }

    /// Runs until ethercrab asks the PDU loop to exit (`MainDevice::release_all`); poll it
    /// next to the MainDevice's futures, on the same executor.
    pub async fn run(mut self) -> Self {
        std::future::poll_fn(|cx| {
            // Register before pumping so a frame queued meanwhile wakes us again.
            self.tx.replace_waker(cx.waker());
            self.pump();
            if self.tx.should_exit() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        self
    }
}

/// Runs `main` (the code using the `MainDevice`) with `transport` pumping frames, on the
/// current thread, until `main` finishes.
pub fn block_on<T>(transport: InProcessTransport<'_>, main: impl Future<Output = T>) -> T {
    futures_lite::future::block_on(futures_lite::future::or(main, async move {
        transport.run().await;
        // The PDU loop was released while `main` still runs: let `main` finish on its own.
        std::future::pending::<T>().await
    }))
}

//! The writer thread: drains the sample ring into an HDF5 file.
//!
//! Layout: a `time` dataset and one dataset per signal, named by the signal
//! ("robot.q"), chunked along time and grown as data arrives; scalars are
//! `[N]`, vectors `[N, n]`, unfiltered (see [`new_dataset`] for why). The
//! file is flushed (HDF5 flush, then fsync) every `flush_interval` seconds of
//! data or of wall time, the rows first and the counts that say so after
//! them, so a crash loses at most about that much and the file never
//! promises rows it does not hold (tests/record_crash.rs). The file uses HDF5's default (oldest compatible) format on purpose:
//! the newer format marks a file "open for writing" in its superblock and a
//! file left by a crash then refuses to open without `h5clear`.
//!
//! A recording never replaces a file: its name is reserved create-exclusive
//! (`O_EXCL`), taking the next free numbered name when one exists, so runs in
//! one process or in several never overwrite each other. The file's
//! descriptor is close-on-exec (a child process must not inherit it and hold
//! HDF5's lock on the file after morc closed it), and a process that exits
//! while recording (Lua's `os.exit`, `std::process::exit`) closes its files
//! first (see [`finish_all_at_exit`]).

use crate::RecordError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, File, Location};
use hdf5_metno as hdf5;

use super::recorder::{ComponentMetadata, FileNaming, RecordingMetadata};
use super::ring::RingConsumer;
use super::room::Room;
use morc_kernel::ComponentReport;
use morc_kernel::{Value, ValueType};

/// How one signal sits in a ring row and in the file.
#[derive(Clone, Debug)]
pub struct SignalColumn {
    /// "component.port": also the dataset's name.
    pub name: String,
    /// Value type: the dataset's element type and shape.
    pub ty: ValueType,
    /// The dataset's `unit` attribute.
    pub unit: String,
    /// The dataset's `element_units` attribute (a vector's unit per element; written when
    /// they differ).
    pub element_units: Vec<String>,
    /// The dataset's `element_names` attribute (a vector's name per element, e.g. x, y, z).
    pub element_names: Vec<String>,
    /// The dataset's `description` attribute.
    pub description: String,
    /// Index of its first sample in a row (column 0 is time).
    pub offset: usize,
    /// Samples per row: 1, or n for a vector.
    pub width: usize,
}

/// How often the writer looks at the ring and makes the file durable.
#[derive(Clone, Debug)]
pub struct WriterTiming {
    /// Sleep between drains of the ring (the ring must hold more than this).
    pub poll_interval: Duration,
    /// Seconds of recorded data between flushes: what a crash may lose.
    pub flush_interval: f64,
}

impl Default for WriterTiming {
    fn default() -> Self {
        WriterTiming { poll_interval: Duration::from_millis(50), flush_interval: 0.5 }
    }
}

/// Everything the file's header needs, fixed when recording starts.
#[derive(Clone, Debug)]
pub struct FileHeader {
    /// What the root attributes and `/assembly` describe.
    pub metadata: RecordingMetadata,
    /// Seconds between recorded rows (the recorder's period × decimation).
    pub sample_period: f64,
    /// Steps of the recorder per row written.
    pub decimation: u32,
    /// Instance name of the recorder in its assembly.
    pub recorder: String,
    /// When the run started; None: now (a converted recording keeps its original's).
    pub utc_start: Option<String>,
    /// The robot the recorded assembly drives, and where its joints are in a row: an MCAP
    /// recording writes `/joint_states`, `/tf` and `/robot_description` from it (HDF5 ignores it).
    pub robot: Option<RecordedRobot>,
}

/// The robot of a recording and where its joint positions, velocities and efforts (SI units)
/// sit in a row (offsets of `dof` samples each; None: not recorded).
#[derive(Clone)]
pub struct RecordedRobot {
    /// The robot's model: joint names and the URDF's links.
    pub model: std::sync::Arc<morc_model::Model>,
    /// Its joints (the model's `nq`).
    pub dof: usize,
    /// Offset of `q` (rad, m) in a row.
    pub q: Option<usize>,
    /// Offset of `qd` (rad/s, m/s).
    pub qd: Option<usize>,
    /// Offset of `tau` (N·m, N).
    pub tau: Option<usize>,
}

impl std::fmt::Debug for RecordedRobot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordedRobot")
            .field("model", &self.model.name())
            .field("dof", &self.dof)
            .field("q", &self.q)
            .field("qd", &self.qd)
            .field("tau", &self.tau)
            .finish()
    }
}

/// Counters the writer publishes while it runs.
#[derive(Debug, Default)]
pub struct WriterProgress {
    /// Rows in the file.
    pub written: AtomicU64,
    /// Rows made durable by the last flush.
    pub flushed: AtomicU64,
    /// The writer thread has ended: it takes no more rows.
    pub ended: AtomicBool,
    /// Writing failed (a full disk): the recording stopped, [`WriterProgress::error`] says why.
    pub failed: AtomicBool,
    /// What failed, naming the file and the cause; set before `failed`.
    pub error: Mutex<Option<String>>,
}

/// What a finished writer reports.
#[derive(Clone, Debug, PartialEq)]
pub struct WriterOutcome {
    /// The file written (the numbered one if the name asked for was taken).
    pub path: PathBuf,
    /// Rows in the file.
    pub samples: u64,
    /// Rows lost: refused by a full ring, or not written after an error.
    pub dropped: u64,
    /// The first write error, if any (later rows were counted as dropped).
    pub error: Option<String>,
}

/// A running writer thread.
pub struct Writer {
    stop: Arc<AtomicBool>,
    progress: Arc<WriterProgress>,
    thread: Option<JoinHandle<WriterOutcome>>,
    path: PathBuf,
    /// Its entry in [`OPEN_WRITERS`].
    id: u64,
}

/// A writer as the exit handler sees it: enough to stop it and wait for its file to close.
struct OpenWriter {
    id: u64,
    stop: Arc<AtomicBool>,
    thread: std::thread::Thread,
    /// Disconnects when the writer thread ends (its sender is dropped then).
    closed: crossbeam_channel::Receiver<()>,
}

/// Writers with a file open, for [`finish_all_at_exit`].
static OPEN_WRITERS: Mutex<Vec<OpenWriter>> = Mutex::new(Vec::new());
static NEXT_WRITER_ID: AtomicU64 = AtomicU64::new(0);
static AT_EXIT: Once = Once::new();

/// Closes every recording still open when the process exits through
/// `exit()` (Lua's `os.exit`, `std::process::exit`), which runs no
/// destructors: each writer drains its ring, writes its closing attributes
/// and closes its file, so the data recorded so far is in the file. Waits at
/// most 10 s per file (a stuck disk must not keep the process alive).
extern "C" fn finish_all_at_exit() {
    let writers: Vec<OpenWriter> = match OPEN_WRITERS.lock() {
        Ok(mut w) => std::mem::take(&mut *w),
        Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
    };
    for w in &writers {
        w.stop.store(true, Ordering::Release);
        w.thread.unpark();
    }
    for w in &writers {
        let _ = w.closed.recv_timeout(Duration::from_secs(10));
    }
}

impl Writer {
    /// Creates the file (header, empty datasets) and starts draining `ring`
    /// into it. Returns once the file exists, or with an error that names
    /// the path and what to do.
    pub fn start(header: FileHeader, columns: Vec<SignalColumn>, ring: RingConsumer, timing: WriterTiming) -> Result<Writer, RecordError> {
        let asked = header.metadata.path.clone();
        let naming = header.metadata.naming;
        // Made under a hidden name and given its own once whole: a kill at any moment leaves no
        // file under a recording's name that a reader cannot open.
        let partial = partial_file(&asked).map_err(RecordError::Write)?;
        let stop = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(WriterProgress::default());
        let (ready_tx, ready_rx) = crossbeam_channel::bounded::<Result<PathBuf, String>>(1);
        let (closed_tx, closed_rx) = crossbeam_channel::bounded::<()>(0);
        let (stop2, progress2) = (stop.clone(), progress.clone());
        let (partial2, shown) = (partial.clone(), asked.clone());
        // The HDF5 handles live and die on the writer thread.
        let thread = std::thread::Builder::new()
            .name(format!("rec-{}", header.recorder))
            .spawn(move || {
                let _closed = closed_tx; // dropped when this thread ends: the file is closed
                                         // Says "ended" however the thread ends (a recorder waiting for room stops waiting).
                struct Ended(Arc<WriterProgress>);
                impl Drop for Ended {
                    fn drop(&mut self) {
                        self.0.ended.store(true, Ordering::Release);
                    }
                }
                let _ended = Ended(progress2.clone());
                let made = create_sink(&header, columns, &partial2).and_then(|mut file| {
                    let room = Room::new(std::fs::OpenOptions::new().write(true).open(&partial2).map_err(|e| format!("cannot create {}: {}", asked.display(), io_reason(&e)))?);
                    let path = publish(&partial2, &asked, naming)?;
                    file.renamed(path.clone());
                    Ok((file, room, path))
                });
                let (file, room) = match made {
                    Ok((file, room, path)) => {
                        let _ = ready_tx.send(Ok(path));
                        (file, room)
                    }
                    Err(e) => {
                        // Leave no partial file behind.
                        let _ = std::fs::remove_file(&partial2);
                        let _ = ready_tx.send(Err(e.clone()));
                        return WriterOutcome { path: asked, samples: 0, dropped: 0, error: Some(e) };
                    }
                };
                drain_loop(file, ring, &timing, &stop2, &progress2, room)
            })
            .map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                RecordError::Write(format!("cannot start the writer thread for {}: {e}", shown.display()))
            })?;
        let id = NEXT_WRITER_ID.fetch_add(1, Ordering::Relaxed);
        let open = OpenWriter { id, stop: stop.clone(), thread: thread.thread().clone(), closed: closed_rx };
        let mut writer = Writer { stop, progress, thread: Some(thread), path: PathBuf::new(), id };
        match ready_rx.recv() {
            Ok(Ok(path)) => {
                writer.path = path;
                AT_EXIT.call_once(|| {
                    // SAFETY: registers a plain extern "C" fn; it runs once, at exit().
                    unsafe { libc::atexit(finish_all_at_exit) };
                });
                OPEN_WRITERS.lock().unwrap_or_else(|p| p.into_inner()).push(open);
                Ok(writer)
            }
            Ok(Err(e)) => {
                writer.finish();
                Err(RecordError::Write(e))
            }
            Err(_) => {
                writer.finish();
                Err(RecordError::Write("the recording's writer thread ended before creating its file".into()))
            }
        }
    }

    /// The writer thread, to wake it when rows wait for room.
    pub fn thread(&self) -> Option<&std::thread::Thread> {
        self.thread.as_ref().map(|t| t.thread())
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows written and flushed so far, and whether the thread ended.
    pub fn progress(&self) -> &Arc<WriterProgress> {
        &self.progress
    }

    /// Writes what remains in the ring, the closing attributes, closes the
    /// file and reports. Idempotent: later calls report nothing new.
    pub fn finish(&mut self) -> WriterOutcome {
        self.stop.store(true, Ordering::Release);
        OPEN_WRITERS.lock().unwrap_or_else(|p| p.into_inner()).retain(|w| w.id != self.id);
        let Some(thread) = self.thread.take() else {
            return WriterOutcome { path: self.path.clone(), samples: 0, dropped: 0, error: Some("already finished".into()) };
        };
        thread.thread().unpark();
        thread.join().unwrap_or_else(|_| WriterOutcome {
            path: self.path.clone(),
            samples: self.progress.written.load(Ordering::Relaxed),
            dropped: 0,
            error: Some("the writer thread panicked".into()),
        })
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.finish();
        }
    }
}

/// Creates the parent directory and a hidden, empty file beside `path` for the recording to be
/// made in (`.NAME.morc-PID.partial`), removing those that processes no longer running left
/// there (killed before their file was made). Errors are the operating system's plain reason,
/// not HDF5's stack.
fn partial_file(path: &Path) -> Result<PathBuf, String> {
    let hint = "choose another --record DIR";
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create directory {}: {} — {hint}", dir.display(), io_reason(&e)))?;
    remove_stale_partials(dir);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "recording".into());
    for n in 0..1000u32 {
        let suffix = if n == 0 { String::new() } else { format!("-{n}") };
        let partial = dir.join(format!(".{name}.morc-{}{suffix}.partial", std::process::id()));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&partial) {
            Ok(_) => return Ok(partial),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {} — {hint}", path.display(), io_reason(&e))),
        }
    }
    Err(format!("cannot create {}: 1000 partial recordings of this process are in {}", path.display(), dir.display()))
}

/// Removes the partial files of `dir` whose process has ended.
fn remove_stale_partials(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some(rest) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".partial")) else { continue };
        let Some((_, pid)) = rest.rsplit_once(".morc-") else { continue };
        let Ok(pid) = pid.split('-').next().unwrap_or_default().parse::<libc::pid_t>() else { continue };
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Gives the made recording `partial` its name: `path` itself ([`FileNaming::AsGiven`]) or
/// `stem-000.ext` ([`FileNaming::Numbered`]), and when that exists the next free
/// `stem-001.ext`, `stem-002.ext`… next to it; never replacing a file (`RENAME_NOREPLACE`, or a
/// hard link where the file system has no such rename). Returns the name it got.
fn publish(partial: &Path, path: &Path, naming: FileNaming) -> Result<PathBuf, String> {
    let hint = "choose another --record DIR";
    // As given: x.h5, then x-001.h5, x-002.h5…; numbered: x-000.h5, x-001.h5…
    // A bound, so a folder that refuses every name cannot loop for ever.
    for n in 0..100_000u64 {
        let candidate = match (naming, n) {
            (FileNaming::AsGiven, 0) => path.to_path_buf(),
            _ => numbered(path, n),
        };
        match rename_no_replace(partial, &candidate) {
            Ok(()) => {
                if naming == FileNaming::AsGiven && n > 0 {
                    log::warn!("{} exists: recording to {} instead (a recording never replaces a file)", path.display(), candidate.display());
                }
                // The new name survives a power cut too.
                if let Some(dir) = candidate.parent().filter(|d| !d.as_os_str().is_empty()) {
                    if let Ok(d) = std::fs::File::open(dir) {
                        let _ = d.sync_all();
                    }
                }
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create {}: {} — {hint}", candidate.display(), io_reason(&e))),
        }
    }
    Err(format!("cannot create {}: 100000 numbered files of that name exist already — {hint}", path.display()))
}

/// Renames `from` to `to` unless `to` exists (then `AlreadyExists`).
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path with a NUL byte"));
    let (f, t) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths, relative to the working directory.
    let r = unsafe { libc::renameat2(libc::AT_FDCWD, f.as_ptr(), libc::AT_FDCWD, t.as_ptr(), libc::RENAME_NOREPLACE) };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        // A file system without RENAME_NOREPLACE: a hard link is just as exclusive.
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => {
            std::fs::hard_link(from, to)?;
            let _ = std::fs::remove_file(from);
            Ok(())
        }
        _ => Err(e),
    }
}

/// `stem-nnn.ext` next to `path` (three digits at least).
fn numbered(path: &Path, n: u64) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-{n:03}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n:03}"),
    };
    path.with_file_name(name)
}

/// "permission denied" rather than "Permission denied (os error 13)".
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" (os error ") {
        Some(i) => &s[..i],
        None => &s,
    };
    let mut c = s.chars();
    c.next().map(|f| f.to_lowercase().chain(c).collect()).unwrap_or_default()
}

/// Where the writer thread puts rows: an HDF5 file ([`RecordingFile`]) or an
/// MCAP file ([`crate::mcap::McapFile`]), chosen by the file's extension.
pub(crate) trait Sink {
    /// The file written.
    fn path(&self) -> &Path;
    /// Rows written so far.
    fn rows(&self) -> u64;
    /// Seconds between rows.
    fn sample_period(&self) -> f64;
    /// Appends `batch` (rows of `width` samples, row-major; column 0 is time).
    fn append(&mut self, batch: &[f64], width: usize) -> Result<(), String>;
    /// Makes everything written so far durable, with the counts so far.
    fn flush(&mut self, dropped: u64) -> Result<(), String>;
    /// The most bytes the file can take on disk once it holds `rows` rows after `flushes`
    /// flushes, closing records included: the room the writer keeps ahead ([`Room`]).
    fn bound(&self, rows: u64, flushes: u64) -> u64;
    /// The file was made under another name and now has `path`.
    fn renamed(&mut self, path: PathBuf);
    /// Writes the closing counts, marks the file complete (or, for a mended
    /// recording that was cut short, not), says why it stopped early when
    /// `write_error` is not empty, and closes it.
    fn close(self: Box<Self>, dropped: u64, complete: bool, write_error: &str) -> Result<(), String>;
}

/// Bytes `path` takes on disk now (its blocks; at least its length for a file without holes).
pub(crate) fn disk_bytes(path: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).map(|m| m.blocks() * 512).unwrap_or(0)
}

/// Whether `path` names an MCAP file (`.mcap`); anything else is HDF5.
pub fn is_mcap(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("mcap"))
}

/// The file for `header.metadata.path` (MCAP or HDF5 by its extension), made in the empty file
/// `at` (the same, or a partial file to be renamed to it); messages name `header.metadata.path`.
pub(crate) fn create_sink(header: &FileHeader, columns: Vec<SignalColumn>, at: &Path) -> Result<Box<dyn Sink>, String> {
    if is_mcap(&header.metadata.path) {
        Ok(Box::new(crate::mcap::McapFile::create(header, columns, at)?))
    } else {
        Ok(Box::new(RecordingFile::create(header, columns, at)?))
    }
}

impl Sink for RecordingFile {
    fn path(&self) -> &Path {
        &self.path
    }
    fn rows(&self) -> u64 {
        self.rows
    }
    fn sample_period(&self) -> f64 {
        self.sample_period
    }
    fn append(&mut self, batch: &[f64], width: usize) -> Result<(), String> {
        RecordingFile::append(self, batch, width).map_err(|e| e.to_string())
    }
    fn flush(&mut self, dropped: u64) -> Result<(), String> {
        RecordingFile::flush(self, dropped).map_err(|e| e.to_string())
    }
    /// Each dataset's chunks are allocated whole (unfiltered), so at most one chunk per dataset
    /// beyond its rows; the chunk index (a B-tree of about 40 bytes a chunk) and the attributes
    /// closing writes fit in a tenth more and a margin.
    fn bound(&self, rows: u64, _flushes: u64) -> u64 {
        let chunks: u64 = self.chunk_bytes.iter().sum();
        self.created + rows * self.row_bytes * 11 / 10 + chunks + (64 << 10)
    }
    fn renamed(&mut self, path: PathBuf) {
        self.path = path;
    }
    fn close(self: Box<Self>, dropped: u64, complete: bool, write_error: &str) -> Result<(), String> {
        RecordingFile::close(*self, dropped, complete, write_error).map_err(|e| e.to_string())
    }
}

fn drain_loop(mut file: Box<dyn Sink>, mut ring: RingConsumer, timing: &WriterTiming, stop: &AtomicBool, progress: &WriterProgress, mut room: Room) -> WriterOutcome {
    let width = ring.width();
    // Take at most a quarter of the ring per write, so the producer gets
    // room back early when the writer is behind.
    let batch_rows = (ring.capacity() / 4).max(1);
    let mut batch: Vec<f64> = Vec::with_capacity(batch_rows * width);
    let rows_per_flush = ((timing.flush_interval / file.sample_period()).ceil() as u64).max(1);
    let mut last_flush_rows = 0u64;
    let mut last_flush_at = Instant::now();
    let mut flushes = 0u64;
    // The cause, for the file's `write_error`; the whole message goes to the run.
    let mut failure: Option<String> = None;
    let mut lost = 0u64;
    loop {
        // Read the flag before draining: rows pushed before stop are all seen.
        let stopping = stop.load(Ordering::Acquire);
        loop {
            batch.clear();
            let n = ring.pop_into(&mut batch, batch_rows);
            if n == 0 {
                break;
            }
            if failure.is_some() {
                lost += n as u64;
                continue;
            }
            // Room for these rows, the next flush and the closing records before they are
            // taken: a full disk stops the recording while the file can still close whole.
            if let Err(e) = room.ensure(file.bound(file.rows() + n as u64, flushes + 2)) {
                failure = Some(fail(progress, file.as_ref(), &io_cause(&e)));
                lost += n as u64;
                continue;
            }
            if let Err(e) = file.append(&batch, width) {
                failure = Some(fail(progress, file.as_ref(), &e));
                lost += n as u64;
                continue;
            }
            progress.written.store(file.rows(), Ordering::Relaxed);
            // Flush by data time, and by wall time for slow signals, but not
            // more than 20 times a second when running faster than real time.
            let due_by_data = file.rows() - last_flush_rows >= rows_per_flush;
            let due_by_wall = last_flush_at.elapsed().as_secs_f64() >= timing.flush_interval;
            if (due_by_data || due_by_wall) && last_flush_at.elapsed() >= Duration::from_millis(50) {
                if let Err(e) = flush(file.as_mut(), ring.dropped() + lost, progress, &mut flushes) {
                    failure = Some(fail(progress, file.as_ref(), &e));
                }
                last_flush_rows = file.rows();
                last_flush_at = Instant::now();
            }
        }
        if stopping {
            break;
        }
        if failure.is_none() && file.rows() > last_flush_rows && last_flush_at.elapsed().as_secs_f64() >= timing.flush_interval {
            if let Err(e) = flush(file.as_mut(), ring.dropped() + lost, progress, &mut flushes) {
                failure = Some(fail(progress, file.as_ref(), &e));
            }
            last_flush_rows = file.rows();
            last_flush_at = Instant::now();
        }
        std::thread::park_timeout(timing.poll_interval);
    }
    let dropped = ring.dropped() + lost;
    let (path, rows) = (file.path().to_path_buf(), file.rows());
    // A file that stopped early still closes, saying why (the room kept ahead is for this).
    let closed = file.close(dropped, true, failure.as_deref().unwrap_or_default());
    room.release();
    let error = progress.error.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match closed {
        Ok(()) => WriterOutcome { path, samples: rows, dropped, error },
        Err(e) => {
            // The rows since the last flush may be lost with the closing records.
            let samples = progress.flushed.load(Ordering::Relaxed);
            let error = error.unwrap_or_else(|| format!("closing {} failed: {e}", path.display()));
            WriterOutcome { path, samples, dropped: dropped + rows - samples, error: Some(error) }
        }
    }
}

/// Flushes `file` and counts it.
fn flush(file: &mut dyn Sink, dropped: u64, progress: &WriterProgress, flushes: &mut u64) -> Result<(), String> {
    file.flush(dropped)?;
    *flushes += 1;
    progress.flushed.store(file.rows(), Ordering::Relaxed);
    Ok(())
}

/// Notes that writing `file` failed of `cause`: the message the run fails with (naming the
/// file, the cause, what the file holds and what to do) goes into `progress`; returns `cause`
/// for the file itself.
fn fail(progress: &WriterProgress, file: &dyn Sink, cause: &str) -> String {
    let rows = file.rows();
    let message = format!(
        "recording stopped: cannot write {}: {cause}; the file holds the first {rows} samples ({:.3} s) — free space on that disk or record elsewhere (--record DIR)",
        file.path().display(),
        rows as f64 * file.sample_period()
    );
    *progress.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(message);
    progress.failed.store(true, Ordering::Release);
    cause.to_string()
}

/// The operating system's words for `e`, as it says them: "No space left on device".
fn io_cause(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The open file and its datasets.
struct RecordingFile {
    path: PathBuf,
    file: File,
    sample_period: f64,
    time: Dataset,
    signals: Vec<(SignalColumn, Dataset)>,
    /// Rows written so far.
    rows: u64,
    /// Bytes on disk once created (header and empty datasets).
    created: u64,
    /// Bytes of one row in all datasets.
    row_bytes: u64,
    /// Bytes of one chunk of each dataset.
    chunk_bytes: Vec<u64>,
    /// Reused column buffers (no allocation per batch in steady state).
    reals: Vec<f64>,
    integers: Vec<i64>,
    bytes: Vec<u8>,
}

/// Rows per chunk for a signal of `width` samples: about 32 KiB a chunk.
fn chunk_rows(width: usize) -> usize {
    (4096 / width.max(1)).clamp(64, 4096)
}

impl RecordingFile {
    fn create(header: &FileHeader, columns: Vec<SignalColumn>, at: &Path) -> Result<RecordingFile, String> {
        let meta = &header.metadata;
        let path = meta.path.clone();
        let fail = |e: hdf5::Error| format!("cannot create {}: {e} — choose another --record DIR", path.display());
        let file = File::create(at).map_err(fail)?;
        close_on_exec(&file).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        hold_metadata_until_flush(&file).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        write_header(&file, header).map_err(fail)?;
        let time = new_dataset(&file, "time", ValueType::Real, 1).map_err(fail)?;
        set_str(&time, "unit", "s").map_err(fail)?;
        set_str(&time, "description", "time since the start of the assembly").map_err(fail)?;
        set_str(&time, "source", &format!("{}.time", header.recorder)).map_err(fail)?;
        set_f64(&time, "sample_period", header.sample_period).map_err(fail)?;
        let mut signals = Vec::with_capacity(columns.len());
        let element_bytes = |ty: ValueType| if ty == ValueType::Boolean { 1 } else { 8 };
        let mut row_bytes = 8;
        let mut chunk_bytes = vec![chunk_rows(1) as u64 * 8];
        for c in columns {
            row_bytes += (c.width * element_bytes(c.ty)) as u64;
            chunk_bytes.push((chunk_rows(c.width) * c.width * element_bytes(c.ty)) as u64);
            let ds = new_dataset(&file, &c.name, c.ty, c.width).map_err(|e| format!("cannot create dataset '{}' in {}: {e}", c.name, path.display()))?;
            set_str(&ds, "unit", &c.unit).map_err(fail)?;
            set_strs(&ds, "element_units", &c.element_units).map_err(fail)?;
            set_strs(&ds, "element_names", &c.element_names).map_err(fail)?;
            set_str(&ds, "description", &c.description).map_err(fail)?;
            set_str(&ds, "source", &c.name).map_err(fail)?;
            set_f64(&ds, "sample_period", header.sample_period).map_err(fail)?;
            set_str(&ds, "type", &c.ty.to_string()).map_err(fail)?;
            signals.push((c, ds));
        }
        file.flush().map_err(fail)?;
        let created = disk_bytes(at).max(std::fs::metadata(at).map(|m| m.len()).unwrap_or(0));
        Ok(RecordingFile {
            path: at.to_path_buf(),
            file,
            sample_period: header.sample_period,
            time,
            signals,
            rows: 0,
            created,
            row_bytes,
            chunk_bytes,
            reals: Vec::new(),
            integers: Vec::new(),
            bytes: Vec::new(),
        })
    }

    /// Appends `batch` (rows of `width` samples, row-major) to every dataset.
    fn append(&mut self, batch: &[f64], width: usize) -> hdf5::Result<()> {
        let m = batch.len() / width;
        if m == 0 {
            return Ok(());
        }
        let start = self.rows as usize;
        let end = start + m;
        self.reals.clear();
        self.reals.extend(batch.chunks_exact(width).map(|r| r[0]));
        self.time.resize(end)?;
        self.time.write_slice(&self.reals[..], start..end)?;
        for (c, ds) in &self.signals {
            let cols = c.offset..c.offset + c.width;
            match c.ty {
                ValueType::Integer => {
                    self.integers.clear();
                    self.integers.extend(batch.chunks_exact(width).map(|r| r[c.offset] as i64));
                    ds.resize(end)?;
                    ds.write_slice(&self.integers[..], start..end)?;
                }
                ValueType::Boolean => {
                    self.bytes.clear();
                    self.bytes.extend(batch.chunks_exact(width).map(|r| u8::from(r[c.offset] != 0.0)));
                    ds.resize(end)?;
                    ds.write_slice(&self.bytes[..], start..end)?;
                }
                ValueType::Vector(n) => {
                    self.reals.clear();
                    for r in batch.chunks_exact(width) {
                        self.reals.extend_from_slice(&r[cols.clone()]);
                    }
                    ds.resize((end, n))?;
                    let view = ndarray::ArrayView2::from_shape((m, n), &self.reals[..]).expect("m·n samples");
                    ds.write_slice(view, (start..end, ..))?;
                }
                ValueType::Real | ValueType::String => {
                    self.reals.clear();
                    self.reals.extend(batch.chunks_exact(width).map(|r| r[c.offset]));
                    ds.resize(end)?;
                    ds.write_slice(&self.reals[..], start..end)?;
                }
                ValueType::List | ValueType::Record => unreachable!("the recorder refuses list and record signals"),
            }
        }
        self.rows = end as u64;
        Ok(())
    }

    /// Makes everything written so far durable, in two steps so the file
    /// never promises rows it does not hold: first the rows and the
    /// datasets' extents (HDF5 flush, fsync), then the counts that say so
    /// (`samples`, `dropped_samples`; flush, fsync). A crash between the two
    /// leaves counts that are too small, never too large.
    fn flush(&mut self, dropped: u64) -> hdf5::Result<()> {
        self.file.flush()?;
        self.sync();
        self.file.attr("samples")?.write_scalar(&self.rows)?;
        self.file.attr("dropped_samples")?.write_scalar(&dropped)?;
        self.file.flush()?;
        self.sync();
        Ok(())
    }

    /// fsync: H5Fflush hands the data to the kernel; this orders it on the disk and survives power loss too.
    fn sync(&self) {
        if let Ok(f) = std::fs::File::open(&self.path) {
            let _ = f.sync_data();
        }
    }

    fn close(mut self, dropped: u64, complete: bool, write_error: &str) -> hdf5::Result<()> {
        self.file.attr("complete")?.write_scalar(&u8::from(complete))?;
        if !write_error.is_empty() {
            set_str(&self.file, "write_error", write_error)?;
        }
        self.flush(dropped)?;
        let RecordingFile { file, time, signals, .. } = self;
        // Datasets first: the file closes only when no handle is left.
        drop(time);
        drop(signals);
        file.close()
    }
}

/// Keeps `file`'s metadata (B-tree nodes, object headers) in HDF5's cache until the next flush:
/// with evictions on, the cache may write a node that points at chunks allocated since the last
/// flush while the superblock on disk still has the old end of file, and a file killed then
/// reads "addr overflow" (tests/record_crash.rs caught it). Each flush writes it all, superblock
/// included; the cache grows by one flush interval's metadata meanwhile.
fn hold_metadata_until_flush(file: &File) -> Result<(), String> {
    use hdf5_metno_sys::h5ac::{H5AC_cache_config_t, H5AC__CURR_CACHE_CONFIG_VERSION};
    use hdf5_metno_sys::h5c::{H5C_decr__off, H5C_flash_incr__off, H5C_incr__off};
    let mut config = H5AC_cache_config_t { version: H5AC__CURR_CACHE_CONFIG_VERSION, ..Default::default() };
    // SAFETY: a valid open file id and a config struct HDF5 fills (its version set as it asks);
    // HDF5's calls are serialised by its lock.
    let read = hdf5::sync::sync(|| unsafe { hdf5_metno_sys::h5f::H5Fget_mdc_config(file.id(), &mut config) });
    if read < 0 {
        return Err("HDF5 does not give the file's metadata cache settings".into());
    }
    // Evictions off needs the cache's automatic resizing off too (HDF5 refuses it otherwise).
    config.evictions_enabled = 0;
    config.incr_mode = H5C_incr__off;
    config.flash_incr_mode = H5C_flash_incr__off;
    config.decr_mode = H5C_decr__off;
    // SAFETY: as above; the struct is the one HDF5 just filled, changed in documented fields.
    let set = hdf5::sync::sync(|| unsafe { hdf5_metno_sys::h5f::H5Fset_mdc_config(file.id(), &mut config) });
    if set < 0 {
        return Err("HDF5 refuses to hold the file's metadata until a flush".into());
    }
    Ok(())
}

/// Marks the descriptor HDF5 opened `file` with close-on-exec (HDF5 does
/// not): a child process started while recording (`os.execute`, a test's
/// helper) would otherwise inherit it and, with it, HDF5's lock on the file,
/// so a reader is refused the file until the child ends — long after morc
/// closed it. (A child forked between HDF5's open and this call still
/// inherits it; that window is a few microseconds.)
pub(crate) fn close_on_exec(file: &File) -> Result<(), String> {
    let mut handle: *mut libc::c_void = std::ptr::null_mut();
    // SAFETY: a valid open file id and an out-pointer; HDF5's calls are serialised by its lock.
    let status = hdf5::sync::sync(|| unsafe { hdf5_metno_sys::h5f::H5Fget_vfd_handle(file.id(), hdf5_metno_sys::h5p::H5P_DEFAULT, &mut handle) });
    if status < 0 || handle.is_null() {
        return Err("HDF5 does not tell the file's descriptor".into());
    }
    // SAFETY: the sec2 driver (HDF5's default) hands out a pointer to its int descriptor.
    let fd = unsafe { *(handle as *const libc::c_int) };
    // SAFETY: fcntl on a descriptor this process owns.
    let ok = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) >= 0
    };
    if ok {
        Ok(())
    } else {
        Err(format!("cannot mark its descriptor close-on-exec: {}", std::io::Error::last_os_error()))
    }
}

/// A signal's dataset: chunked along time, without filters. (Deflate made
/// files a crash could break: HDF5 rewrites the last, partly filled chunk at
/// every flush, compressed to a new size, so at a new place, and hands the
/// old place to the next allocation — which the last flushed index still
/// points to: "filter returned failure during read". Unfiltered chunks keep
/// their size and place, and a flushed row's bytes never change.)
fn new_dataset(file: &File, name: &str, ty: ValueType, width: usize) -> hdf5::Result<Dataset> {
    let rows = chunk_rows(width);
    let b = file.new_dataset_builder();
    match ty {
        ValueType::Integer => b.empty::<i64>().chunk(rows).shape(0..).create(name),
        ValueType::Boolean => b.empty::<u8>().chunk(rows).shape(0..).create(name),
        ValueType::Vector(n) => b.empty::<f64>().chunk((rows, n)).shape((0.., n)).create(name),
        ValueType::Real | ValueType::String => b.empty::<f64>().chunk(rows).shape(0..).create(name),
        ValueType::List | ValueType::Record => unreachable!("the recorder refuses list and record signals"),
    }
}

fn write_header(file: &File, h: &FileHeader) -> hdf5::Result<()> {
    let m = &h.metadata;
    set_str(file, "morc_version", env!("CARGO_PKG_VERSION"))?;
    set_str(file, "git_commit", env!("MORC_GIT_COMMIT"))?;
    set_str(file, "utc_start", &h.utc_start.clone().unwrap_or_else(utc_now_iso8601))?;
    set_str(file, "robot", &m.robot)?;
    set_str(file, "assembly", &m.assembly)?;
    set_f64(file, "base_period", m.base_period)?;
    set_f64(file, "sample_period", h.sample_period)?;
    file.new_attr::<i64>().shape(()).create("decimation")?.write_scalar(&i64::from(h.decimation))?;
    set_str(file, "recorder", &h.recorder)?;
    set_str(file, "notes", &m.notes)?;
    // Updated at every flush and at the end, so a crashed file says how much it holds.
    file.new_attr::<u64>().shape(()).create("samples")?.write_scalar(&0u64)?;
    file.new_attr::<u64>().shape(()).create("dropped_samples")?.write_scalar(&0u64)?;
    file.new_attr::<u8>().shape(()).create("complete")?.write_scalar(&0u8)?;
    let assembly = file.create_group("assembly")?;
    set_str(&assembly, "name", &m.assembly)?;
    set_f64(&assembly, "base_period", m.base_period)?;
    for c in &m.components {
        write_component(&assembly, c, m.base_period)?;
    }
    Ok(())
}

fn write_component(assembly: &hdf5::Group, c: &ComponentMetadata, base_period: f64) -> hdf5::Result<()> {
    let g = assembly.create_group(&c.name)?;
    set_str(&g, "kind", &c.kind)?;
    g.new_attr::<i64>().shape(()).create("every")?.write_scalar(&i64::from(c.every))?;
    set_f64(&g, "sample_time", f64::from(c.every) * base_period)?;
    let params = g.create_group("parameters")?;
    for (name, value) in &c.params {
        set_value(&params, name, value)?;
    }
    Ok(())
}

/// One component's execution-time statistics, in seconds, as a recording keeps them under `timing`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimingEntry {
    /// Instance name.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Sample time in base periods.
    pub every: i64,
    /// Steps taken.
    pub steps: u64,
    /// Steps timed.
    pub count: u64,
    /// Mean execution time per step (s).
    pub mean: f64,
    /// Median (s).
    pub p50: f64,
    /// 99th percentile (s).
    pub p99: f64,
    /// Longest (s).
    pub max: f64,
    /// Steps that missed their deadline.
    pub overruns: u64,
}

impl From<&ComponentReport> for TimingEntry {
    fn from(r: &ComponentReport) -> Self {
        let s = |ns: f64| ns * 1e-9;
        TimingEntry {
            name: r.name.clone(),
            kind: r.kind.clone(),
            every: i64::from(r.every),
            steps: r.steps,
            count: r.exec.count,
            mean: s(r.exec.mean),
            p50: s(r.exec.p50 as f64),
            p99: s(r.exec.p99 as f64),
            max: s(r.exec.max as f64),
            overruns: r.overruns,
        }
    }
}

/// Per-component execution-time statistics of a finished run, written into
/// the group `/timing` of a closed recording (replacing an earlier one); an
/// MCAP recording gets `timing/<name>` metadata records.
pub fn write_timing(path: &Path, reports: &[ComponentReport]) -> Result<(), RecordError> {
    let entries: Vec<TimingEntry> = reports.iter().map(TimingEntry::from).collect();
    write_timing_entries(path, &entries)
}

/// [`write_timing`] from statistics already in seconds (a converted recording's).
pub(crate) fn write_timing_entries(path: &Path, entries: &[TimingEntry]) -> Result<(), RecordError> {
    if is_mcap(path) {
        return crate::mcap::write_timing(path, entries);
    }
    let fail = |e: hdf5::Error| RecordError::Write(format!("cannot write timing into {}: {e}", path.display()));
    let file = File::append(path).map_err(fail)?;
    // A child process forked while this is open would keep HDF5's exclusive lock on the file
    // after it is closed here, and readers out (record_plot caught it, a test spawning `morc`).
    close_on_exec(&file).map_err(|e| RecordError::Write(format!("cannot write timing into {}: {e}", path.display())))?;
    if file.link_exists("timing") {
        file.unlink("timing").map_err(fail)?;
    }
    let timing = file.create_group("timing").map_err(fail)?;
    set_str(&timing, "unit", "s").map_err(fail)?;
    for r in entries {
        let g = timing.create_group(&r.name).map_err(fail)?;
        (|| -> hdf5::Result<()> {
            set_str(&g, "kind", &r.kind)?;
            g.new_attr::<i64>().shape(()).create("every")?.write_scalar(&r.every)?;
            g.new_attr::<u64>().shape(()).create("steps")?.write_scalar(&r.steps)?;
            g.new_attr::<u64>().shape(()).create("count")?.write_scalar(&r.count)?;
            set_f64(&g, "mean", r.mean)?;
            set_f64(&g, "p50", r.p50)?;
            set_f64(&g, "p99", r.p99)?;
            set_f64(&g, "max", r.max)?;
            g.new_attr::<u64>().shape(()).create("overruns")?.write_scalar(&r.overruns)?;
            Ok(())
        })()
        .map_err(fail)?;
    }
    file.flush().map_err(fail)?;
    Ok(())
}

pub(crate) fn set_str(loc: &Location, name: &str, value: &str) -> hdf5::Result<()> {
    // HDF5 strings end at NUL: keep what precedes one.
    let clean = value.split('\0').next().unwrap_or_default();
    let v: VarLenUnicode = clean.parse().map_err(|e| hdf5::Error::from(format!("attribute {name}: {e}")))?;
    loc.new_attr::<VarLenUnicode>().shape(()).create(name)?.write_scalar(&v)
}

/// A list of strings as a 1-D string attribute; nothing when `values` is empty.
fn set_strs(loc: &Location, name: &str, values: &[String]) -> hdf5::Result<()> {
    if values.is_empty() {
        return Ok(());
    }
    let v: Vec<VarLenUnicode> = values
        .iter()
        .map(|s| s.split('\0').next().unwrap_or_default().parse())
        .collect::<Result<_, _>>()
        .map_err(|e| hdf5::Error::from(format!("attribute {name}: {e}")))?;
    loc.new_attr::<VarLenUnicode>().shape(v.len()).create(name)?.write(&v)
}

pub(crate) fn set_f64(loc: &Location, name: &str, value: f64) -> hdf5::Result<()> {
    loc.new_attr::<f64>().shape(()).create(name)?.write_scalar(&value)
}

fn set_value(loc: &Location, name: &str, value: &Value) -> hdf5::Result<()> {
    match value {
        Value::Real(x) => set_f64(loc, name, *x),
        Value::Integer(i) => loc.new_attr::<i64>().shape(()).create(name)?.write_scalar(i),
        Value::Boolean(b) => loc.new_attr::<u8>().shape(()).create(name)?.write_scalar(&u8::from(*b)),
        Value::String(s) => set_str(loc, name, s),
        Value::Vector(v) => loc.new_attr_builder().with_data(&v[..]).create(name).map(|_| ()),
        // A list or record parameter (a path's moves) as its text, which a person can read;
        // MCAP recordings hold every parameter so.
        Value::List(_) | Value::Record(_) => set_str(loc, name, &value.to_string()),
    }
}

/// The current UTC time as ISO 8601 with milliseconds, e.g. "2026-05-01T12:34:56.789Z".
pub fn utc_now_iso8601() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    iso8601(now.as_secs() as i64, now.subsec_millis())
}

/// Nanoseconds since the Unix epoch of an ISO 8601 UTC time as [`utc_now_iso8601`] writes it
/// ("2026-05-01T12:34:56.789Z"; fractions of any length, or none); None for other text.
pub(crate) fn iso8601_nanos(text: &str) -> Option<u64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, m, sec) = (t.next()??, t.next()??, t.next()??);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut nanos = 0u64;
    for (i, c) in fraction.chars().take(9).enumerate() {
        nanos += u64::from(c.to_digit(10)?) * 10u64.pow(8 - i as u32);
    }
    // Days since 1970-01-01 of a civil date (H. Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + m * 60 + sec;
    u64::try_from(secs).ok().map(|s| s * 1_000_000_000 + nanos)
}

fn iso8601(secs: i64, millis: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem / 60 % 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_dates() {
        assert_eq!(iso8601(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(iso8601(1_777_638_896, 789), "2026-05-01T12:34:56.789Z");
    }

    #[test]
    fn iso8601_reads_back_as_nanoseconds() {
        for (secs, millis) in [(0, 0), (951_782_400, 5), (1_777_638_896, 789), (4_102_444_799, 999)] {
            assert_eq!(iso8601_nanos(&iso8601(secs, millis)), Some(secs as u64 * 1_000_000_000 + u64::from(millis) * 1_000_000));
        }
        assert_eq!(iso8601_nanos("2026-05-01T12:34:56Z"), Some(1_777_638_896_000_000_000));
        assert_eq!(iso8601_nanos("2026-05-01T12:34:56.000000001Z"), Some(1_777_638_896_000_000_001));
        assert_eq!(iso8601_nanos("yesterday"), None);
        assert_eq!(iso8601_nanos(""), None);
    }

    #[test]
    fn chunks_are_about_32_kib() {
        assert_eq!(chunk_rows(1), 4096);
        assert_eq!(chunk_rows(6), 682);
        assert_eq!(chunk_rows(1000), 64);
    }
}

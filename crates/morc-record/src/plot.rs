//! Time plots of a recording (`morc rec plot FILE [signals…] -o out.png|svg`):
//! one panel per signal (a vector signal is one panel, one line per element,
//! named by its `element_names`; a vector whose `element_units` differ, one
//! panel per unit), all panels on the same time axis in seconds, each y axis
//! labelled with the signal and its unit, a title with the assembly and the
//! UTC start.
//!
//! Long datasets are reduced to the minimum and maximum per pixel column
//! before drawing: the picture is the same, peaks included, and the files
//! stay small.
//!
//! Text is drawn with a TrueType font read at run time (DejaVu Sans, Debian's
//! `fonts-dejavu-core`, or the file in `MORC_PLOT_FONT`), so no fontconfig
//! or freetype is needed to build or run.

use crate::RecordError;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hdf5::types::{VarLenAscii, VarLenUnicode};
use hdf5::{File, Location};
use hdf5_metno as hdf5;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use super::glob;

/// How a plot is laid out.
#[derive(Debug, Clone)]
pub struct PlotOptions {
    /// Width of the picture in pixels (SVG: user units).
    pub width: u32,
    /// Height of one panel in pixels.
    pub panel_height: u32,
    /// Signals with the same unit share a panel (off: one panel per signal).
    pub share_units: bool,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions { width: 1200, panel_height: 260, share_units: false }
    }
}

/// What was drawn: for messages and tests.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotSummary {
    /// The picture written (PNG or SVG, by extension).
    pub output: PathBuf,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels: the title, every panel and the time axis.
    pub height: u32,
    /// Panels, top to bottom, each with the labels of its lines.
    pub panels: Vec<(String, Vec<String>)>,
}

/// One recorded signal, read as f64 (integers and booleans converted).
#[derive(Debug, Clone, PartialEq)]
pub struct Signal {
    /// Dataset name, "component.port".
    pub name: String,
    /// The dataset's `unit` attribute ("" if none).
    pub unit: String,
    /// Line labels: `q[1]`…`q[n]`, or the dataset's `element_names`.
    pub labels: Vec<String>,
    /// `columns[k][i]`: element k at sample i.
    pub columns: Vec<Vec<f64>>,
}

struct Panel {
    /// What it shows, e.g. `robot.q`.
    name: String,
    /// The unit of its values ("" if none).
    unit: String,
    /// (label, time-ordered values) per line.
    lines: Vec<(String, Vec<f64>)>,
}

impl Panel {
    /// The y axis label, e.g. `robot.q [rad]`.
    fn axis_label(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} [{}]", self.name, self.unit)
        }
    }
}

/// What a plot shows of a recording, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// "assembly 'ptp' · robot … · started … UTC".
    pub title: String,
    /// Seconds, one per sample.
    pub time: Vec<f64>,
    /// The signals the patterns selected.
    pub signals: Vec<Signal>,
}

/// Reads the signals of the recording at `recording` that `patterns` select
/// (names or globs such as `robot.q*`; none: every signal). Whatever the
/// file holds, the answer is the data or an error naming the file: a file
/// that is not HDF5 or not a morc recording, a dataset of the wrong type,
/// or one larger than the file could hold (sizes are checked before
/// anything is allocated).
pub fn load(recording: &Path, patterns: &[&str]) -> Result<Loaded, RecordError> {
    if super::writer::is_mcap(recording) {
        return load_mcap(recording, patterns);
    }
    let file = super::read::open(recording)?;
    load_from(&file, recording, patterns)
}

/// [`load`] of an MCAP recording, through the reader of `morc rec convert`.
fn load_mcap(recording: &Path, patterns: &[&str]) -> Result<Loaded, RecordError> {
    let c = crate::convert::read(recording)?;
    if c.samples() == 0 {
        return Err(RecordError::Read(format!("{} holds no samples yet", recording.display())));
    }
    let mut available: Vec<String> = c.columns.iter().map(|col| col.name.clone()).collect();
    available.sort();
    let chosen = select(patterns, &available).map_err(|e| RecordError::Signals(format!("{e} in {}", recording.display())))?;
    let rows: Vec<&[f64]> = c.rows.chunks_exact(c.width).collect();
    let mut signals = Vec::new();
    for name in chosen {
        let Some(col) = c.columns.iter().find(|col| col.name == name) else { continue };
        let columns = (0..col.width).map(|k| rows.iter().map(|r| r[col.offset + k]).collect()).collect();
        signals.extend(signals_of(&name, columns, col.unit.clone(), col.element_names.clone(), col.element_units.clone()));
    }
    let h = &c.header;
    let title = title_of(&h.metadata.assembly, &h.metadata.robot, h.utc_start.as_deref().unwrap_or_default());
    Ok(Loaded { title, time: rows.iter().map(|r| r[0]).collect(), signals })
}

fn load_from(file: &File, recording: &Path, patterns: &[&str]) -> Result<Loaded, RecordError> {
    let read = RecordError::Read;
    let in_file = |e: hdf5::Error| format!("reading {}: {e}", recording.display());
    let time: Vec<f64> = file
        .dataset("time")
        .map_err(|e| format!("{} has no readable /time dataset ({e}): not a morc recording?", recording.display()))
        .and_then(|d| super::read::read_reals(&d, recording))
        .map_err(read)?;
    if time.is_empty() {
        return Err(read(format!("{} holds no samples yet", recording.display())));
    }

    let mut available: Vec<String> = file.datasets().map_err(in_file).map_err(read)?.iter().map(|d| d.name().trim_start_matches('/').to_string()).filter(|n| n != "time").collect();
    available.sort();
    let chosen = select(patterns, &available).map_err(|e| RecordError::Signals(format!("{e} in {}", recording.display())))?;

    let mut signals = Vec::new();
    for name in chosen {
        signals.extend(read_signal(file, &name, time.len(), recording).map_err(read)?);
    }
    Ok(Loaded { title: title(file), time, signals })
}

/// Plots the signals of the recording at `recording` that `patterns` select
/// (see [`load`]) into `output`, PNG or SVG by its extension.
pub fn plot(recording: &Path, patterns: &[&str], output: &Path, options: &PlotOptions) -> Result<PlotSummary, RecordError> {
    plot_data(load(recording, patterns)?, "time [s]", output, options)
}

/// Plots signals that are not a recording's (a fit's residuals, predicted against measured
/// torque) as [`plot`] does, over `x` labelled `x_label`; every column as long as `x`.
pub fn plot_data(data: Loaded, x_label: &str, output: &Path, options: &PlotOptions) -> Result<PlotSummary, RecordError> {
    let format = OutputFormat::of(output).map_err(RecordError::Plot)?;
    let Loaded { title, time, signals } = data;
    if time.is_empty() {
        return Err(RecordError::Plot("nothing to plot: no samples".into()));
    }
    if let Some(s) = signals.iter().find(|s| s.columns.is_empty() || s.columns.iter().any(|c| c.len() != time.len())) {
        return Err(RecordError::Plot(format!("signal '{}': every line needs {} values, one per x", s.name, time.len())));
    }
    let panels = group(signals, options.share_units);
    // A picture may go into a folder of its own (runs/, beside the recordings).
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| RecordError::Plot(format!("cannot make {} for the picture: {e}", dir.display())))?;
    }

    let height = TITLE_HEIGHT + options.panel_height * panels.len() as u32 + X_AXIS_HEIGHT;
    let size = (options.width, height);
    font().map_err(RecordError::Plot)?;
    let drawn = match format {
        OutputFormat::Png => draw(BitMapBackend::new(output, size).into_drawing_area(), &title, &time, x_label, &panels, options, true),
        OutputFormat::Svg => draw(SVGBackend::new(output, size).into_drawing_area(), &title, &time, x_label, &panels, options, false),
    };
    drawn.map_err(|e| RecordError::Plot(format!("drawing {}: {e}", output.display())))?;
    Ok(PlotSummary {
        output: output.to_path_buf(),
        width: size.0,
        height: size.1,
        panels: panels.iter().map(|p| (p.axis_label(), p.lines.iter().map(|l| l.0.clone()).collect())).collect(),
    })
}

/// Where a plot goes by default: the recording with `.png`.
pub fn default_output(recording: &Path) -> PathBuf {
    recording.with_extension("png")
}

enum OutputFormat {
    Png,
    Svg,
}

impl OutputFormat {
    fn of(output: &Path) -> Result<Self, String> {
        match output.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()).as_deref() {
            Some("png") => Ok(OutputFormat::Png),
            Some("svg") => Ok(OutputFormat::Svg),
            _ => Err(format!("cannot tell the picture format of {}: name it .png or .svg", output.display())),
        }
    }
}

/// The names `patterns` select, pattern by pattern, each once; every name
/// when there are no patterns. A pattern selecting nothing is an error that
/// lists what there is.
fn select(patterns: &[&str], available: &[String]) -> Result<Vec<String>, String> {
    if patterns.is_empty() {
        return Ok(available.to_vec());
    }
    let mut chosen: Vec<String> = Vec::new();
    for pattern in patterns {
        let matching: Vec<&String> = available.iter().filter(|n| glob::matches(pattern, n)).collect();
        if matching.is_empty() {
            let list = if available.is_empty() { "none".to_string() } else { available.join(", ") };
            return Err(format!("no signal '{pattern}' (signals: {list})"));
        }
        for name in matching {
            if !chosen.contains(name) {
                chosen.push(name.clone());
            }
        }
    }
    Ok(chosen)
}

/// The signal `name`: one, or one per unit when its elements' units differ (each axis then
/// has one unit: a wrench's forces in N, its torques in N·m).
fn read_signal(file: &File, name: &str, samples: usize, path: &Path) -> Result<Vec<Signal>, String> {
    let ds = file.dataset(name).map_err(|e| format!("reading '{name}' in {}: {e}", path.display()))?;
    let shape = ds.shape();
    if shape.len() > 2 {
        return Err(format!("'{name}' in {} has {} dimensions ({shape:?}); a recorded signal has 1 or 2", path.display(), shape.len()));
    }
    let width = if shape.len() == 2 { shape[1] } else { 1 };
    // Integers and booleans convert to f64 in the library; a writer still
    // running may have a row or two more than /time.
    let flat: Vec<f64> = super::read::read_reals(&ds, path)?;
    let rows = (flat.len() / width.max(1)).min(samples);
    let columns: Vec<Vec<f64>> = (0..width).map(|k| (0..rows).map(|i| flat[i * width + k]).collect()).collect();
    Ok(signals_of(name, columns, text_attr(&ds, "unit"), super::read::string_list(&ds, "element_names"), super::read::string_list(&ds, "element_units")))
}

/// The signal `name` of `columns` (one per element): one, or one per unit when its elements'
/// units differ; lines labelled by the element names, else `port[k]`.
fn signals_of(name: &str, columns: Vec<Vec<f64>>, unit: String, names: Vec<String>, units: Vec<String>) -> Vec<Signal> {
    let width = columns.len();
    let port = name.rsplit('.').next().unwrap_or(name);
    let labels = if width == 1 {
        vec![name.to_string()]
    } else if names.len() == width {
        names
    } else {
        (1..=width).map(|k| format!("{port}[{k}]")).collect()
    };
    if units.len() != width || width == 1 {
        return vec![Signal { name: name.to_string(), unit, labels, columns }];
    }
    let mut by_unit: Vec<Signal> = Vec::new();
    for ((unit, label), column) in units.into_iter().zip(labels).zip(columns) {
        match by_unit.iter_mut().find(|s| s.unit == unit) {
            Some(s) => {
                s.labels.push(label);
                s.columns.push(column);
            }
            None => by_unit.push(Signal { name: name.to_string(), unit, labels: vec![label], columns: vec![column] }),
        }
    }
    by_unit
}

/// Panels: one per signal, or per unit when `share_units` (in the order the
/// units first appear). A shared panel's lines carry their signal's name.
fn group(signals: Vec<Signal>, share_units: bool) -> Vec<Panel> {
    if !share_units {
        return signals.into_iter().map(|s| Panel { name: s.name, unit: s.unit, lines: s.labels.into_iter().zip(s.columns).collect() }).collect();
    }
    let mut by_unit: Vec<(String, Vec<Signal>)> = Vec::new();
    for s in signals {
        match by_unit.iter_mut().find(|(u, _)| *u == s.unit) {
            Some((_, list)) => list.push(s),
            None => by_unit.push((s.unit.clone(), vec![s])),
        }
    }
    by_unit
        .into_iter()
        .map(|(unit, list)| {
            let name = list.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ");
            let several = list.len() > 1;
            let lines = list
                .into_iter()
                .flat_map(|s| {
                    let name = s.name.clone();
                    s.labels.into_iter().zip(s.columns).map(move |(l, c)| {
                        // In a shared panel `q[1]` alone would be ambiguous.
                        let label = if several && !l.starts_with(&name) { format!("{name} {l}") } else { l };
                        (label, c)
                    })
                })
                .collect();
            Panel { name, unit, lines }
        })
        .collect()
}

/// "assembly 'ptp' · robot sim_axes · started 2026-05-01 10:00:00 UTC".
fn title(file: &File) -> String {
    title_of(&text_attr(file, "assembly"), &text_attr(file, "robot"), &text_attr(file, "utc_start"))
}

fn title_of(assembly: &str, robot: &str, utc: &str) -> String {
    let mut parts = Vec::new();
    parts.push(if assembly.is_empty() { "recording".to_string() } else { format!("assembly '{assembly}'") });
    if !robot.is_empty() {
        parts.push(format!("robot {robot}"));
    }
    if !utc.is_empty() {
        // ISO 8601 "2026-05-01T10:00:00.123Z": seconds are enough for a title.
        let readable = utc.get(..19).map(|s| s.replace('T', " ")).unwrap_or_else(|| utc.to_string());
        parts.push(format!("started {readable} UTC"));
    }
    parts.join("  ·  ")
}

fn text_attr(loc: &Location, name: &str) -> String {
    let Ok(a) = loc.attr(name) else { return String::new() };
    a.read_scalar::<VarLenUnicode>().map(|s| s.to_string()).or_else(|_| a.read_scalar::<VarLenAscii>().map(|s| s.to_string())).unwrap_or_default()
}

/// The drawing font, registered with plotters once per process.
fn font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED.get_or_init(register_fonts).clone()
}

const FONT_DIRS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu",   // Debian, Ubuntu (fonts-dejavu-core)
    "/usr/share/fonts/TTF",               // Arch
    "/usr/share/fonts/dejavu-sans-fonts", // Fedora
    "/usr/share/fonts/dejavu",
];

fn register_fonts() -> Result<(), String> {
    let regular = match std::env::var_os("MORC_PLOT_FONT") {
        Some(path) => PathBuf::from(path),
        None => FONT_DIRS
            .iter()
            .map(|d| Path::new(d).join("DejaVuSans.ttf"))
            .find(|p| p.exists())
            .ok_or_else(|| "plots need a TrueType font for their labels: `sudo apt-get install fonts-dejavu-core`, or set MORC_PLOT_FONT=/path/to/font.ttf".to_string())?,
    };
    let bold = regular.with_file_name("DejaVuSans-Bold.ttf");
    let load = |path: &Path, style: FontStyle| -> Result<(), String> {
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read the plot font {}: {e}", path.display()))?;
        // plotters keeps fonts for the life of the process; they are loaded once.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", style, bytes).map_err(|_| format!("{} is not a TrueType/OpenType font", path.display()))
    };
    load(&regular, FontStyle::Normal)?;
    if bold.exists() {
        load(&bold, FontStyle::Bold)?;
    }
    Ok(())
}

const TITLE_HEIGHT: u32 = 44;
/// Below the last panel: its tick labels and the x axis' label ("time [s]" for a recording).
const X_AXIS_HEIGHT: u32 = 46;
const LEGEND_WIDTH: u32 = 150;
const Y_LABELS_WIDTH: u32 = 78;

/// Tableau 10: distinct hues, readable on white, kind to most colour-blind eyes.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, title: &str, time: &[f64], x_label: &str, panels: &[Panel], options: &PlotOptions, thin_overlay: bool) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let fail = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(fail)?;
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    title_area
        // Measured in the regular face: the bold one is about a tenth wider.
        .draw_text(
            &fitted(title, 20, options.width * 88 / 100),
            &("sans-serif", 20).into_font().style(FontStyle::Bold).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center)),
            (options.width as i32 / 2, TITLE_HEIGHT as i32 / 2),
        )
        .map_err(fail)?;

    let t_range = padded_time(time);
    let plot_width = options.width.saturating_sub(LEGEND_WIDTH + Y_LABELS_WIDTH + 20).max(10) as usize;
    let mut rest = rest;
    for (i, panel) in panels.iter().enumerate() {
        let last = i + 1 == panels.len();
        let height = options.panel_height + if last { X_AXIS_HEIGHT } else { 0 };
        let (area, below) = rest.split_vertically(height);
        rest = below;
        let (chart_area, legend_area) = area.split_horizontally(options.width - LEGEND_WIDTH);

        // Min/max per pixel column: what the picture needs, peaks included.
        let lines: Vec<(&str, Vec<(f64, f64)>)> = panel.lines.iter().map(|(label, ys)| (label.as_str(), min_max_decimate(time, ys, plot_width))).collect();
        let y_range = value_range(lines.iter().flat_map(|(_, pts)| pts.iter().map(|p| p.1)));

        // The y axis label runs along the panel; one too long for it goes above the panel as
        // its caption, the axis keeping the unit.
        let axis_label = panel.axis_label();
        let along_axis = options.panel_height.saturating_sub(12);
        let (y_desc, caption) = if text_width(&axis_label, AXIS_LABEL_SIZE) <= along_axis {
            (axis_label, None)
        } else {
            let across = options.width.saturating_sub(LEGEND_WIDTH + Y_LABELS_WIDTH + 20);
            (if panel.unit.is_empty() { String::new() } else { format!("[{}]", panel.unit) }, Some(fitted(&panel.name, AXIS_LABEL_SIZE, across)))
        };
        let mut builder = ChartBuilder::on(&chart_area);
        if let Some(caption) = &caption {
            builder.caption(caption, ("sans-serif", AXIS_LABEL_SIZE));
        }
        let mut chart = builder
            .margin_top(8)
            .margin_bottom(4)
            .margin_left(6)
            .margin_right(10)
            .x_label_area_size(if last { X_AXIS_HEIGHT } else { 0 })
            .y_label_area_size(Y_LABELS_WIDTH)
            .build_cartesian_2d(t_range.clone(), y_range.clone())
            .map_err(fail)?;
        let x_format = |x: &f64| tick_text(*x, &t_range, 10);
        let y_format = |y: &f64| tick_text(*y, &y_range, 6);
        chart
            .configure_mesh()
            .x_labels(10)
            .y_labels(6)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .x_desc(if last { x_label } else { "" })
            .y_desc(y_desc)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", AXIS_LABEL_SIZE))
            .bold_line_style(BLACK.mix(0.12))
            .light_line_style(BLACK.mix(0.04))
            .draw()
            .map_err(fail)?;
        for (k, (_, points)) in lines.iter().enumerate() {
            let colour = PALETTE[k % PALETTE.len()];
            chart.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2))).map_err(fail)?;
            if thin_overlay {
                // The bitmap rasterizer loses nearly vertical segments of wide
                // lines (a one-sample spike would show as a dot); a 1-pixel
                // line over it draws them.
                chart.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(1))).map_err(fail)?;
            }
        }
        draw_legend(&legend_area, &lines.iter().map(|l| l.0).collect::<Vec<_>>()).map_err(fail)?;
    }
    root.present().map_err(fail)
}

/// The legend beside the panel, outside the data, so it never hides a line.
/// Swatches are rectangles: in SVG every polyline is a data line.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, labels: &[&str]) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let row = 18;
    for (k, label) in labels.iter().enumerate() {
        let y = 14 + row * k as i32;
        if y + row > area.dim_in_pixel().1 as i32 {
            let rest = labels.len() - k;
            area.draw(&Text::new(format!("… {rest} more"), (8, y), ("sans-serif", 13).into_font().color(&BLACK.mix(0.6))))?;
            break;
        }
        let colour = PALETTE[k % PALETTE.len()];
        area.draw(&Rectangle::new([(6, y + 5), (26, y + 8)], colour.filled()))?;
        let room = area.dim_in_pixel().0.saturating_sub(36);
        area.draw(&Text::new(fitted(label, 13, room), (32, y), ("sans-serif", 13).into_font()))?;
    }
    Ok(())
}

/// Size (px) of the axes' labels.
const AXIS_LABEL_SIZE: u32 = 14;

/// How wide `text` is drawn at `size` px (pixels; an estimate from its length if the font
/// cannot measure it).
fn text_width(text: &str, size: u32) -> u32 {
    ("sans-serif", size).into_font().box_size(text).map(|(w, _)| w).unwrap_or_else(|_| text.chars().count() as u32 * size * 6 / 10)
}

/// `text`, shortened with "…" where it is wider than `room` px at `size` px.
fn fitted(text: &str, size: u32, room: u32) -> String {
    if text_width(text, size) <= room {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len())
        .rev()
        .map(|n| format!("{}…", chars[..n].iter().collect::<String>().trim_end()))
        .find(|t| text_width(t, size) <= room)
        .unwrap_or_else(|| "…".into())
}

/// Reduces a line to at most two points (its minimum and maximum, in time
/// order) per one of `columns` equal time slices, so peaks survive.
fn min_max_decimate(time: &[f64], values: &[f64], columns: usize) -> Vec<(f64, f64)> {
    let n = values.len().min(time.len());
    if n <= 2 * columns {
        return (0..n).map(|i| (time[i], values[i])).collect();
    }
    let mut points = Vec::with_capacity(2 * columns + 2);
    for c in 0..columns {
        let range = c * n / columns..((c + 1) * n / columns).min(n);
        let (mut lo, mut hi) = (range.start, range.start);
        for i in range.clone() {
            // NaN never wins a comparison: it is skipped.
            if values[i] < values[lo] || values[lo].is_nan() {
                lo = i;
            }
            if values[i] > values[hi] || values[hi].is_nan() {
                hi = i;
            }
        }
        let (first, second) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        points.push((time[first], values[first]));
        if second != first {
            points.push((time[second], values[second]));
        }
    }
    points
}

fn padded_time(time: &[f64]) -> Range<f64> {
    let (first, last) = (time[0], time[time.len() - 1]);
    if last > first {
        first..last
    } else {
        first - 0.5..first + 0.5
    }
}

/// The finite values' range with a margin, never empty.
fn value_range(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return -1.0..1.0;
    }
    if hi - lo < 1e-12 * lo.abs().max(1.0) {
        let half = if lo == 0.0 { 1.0 } else { 0.1 * lo.abs() };
        return lo - half..hi + half;
    }
    let pad = 0.06 * (hi - lo);
    lo - pad..hi + pad
}

/// A tick label with as many decimals as the tick spacing needs ("0.25", not
/// "0.25000000000000006"), in exponent form for very large or small values.
fn tick_text(x: f64, range: &Range<f64>, ticks: usize) -> String {
    let step = (range.end - range.start) / ticks as f64;
    // The tick at zero, computed as a sum of steps, is a rounding error off it (-1.36e-20 on a
    // signal of a few 1e-4): zero it is.
    if x.abs() < 1e-9 * step.abs() {
        return "0".into();
    }
    let magnitude = range.start.abs().max(range.end.abs());
    if magnitude >= 1e6 || (magnitude < 1e-3 && magnitude > 0.0) {
        return format!("{x:.2e}");
    }
    let decimals = if step > 0.0 { (-step.log10().floor()).max(0.0) as usize + 1 } else { 2 };
    let text = format!("{:.*}", decimals.min(6), x);
    // Trailing zeros say nothing; "-0" is "0".
    let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text };
    if text == "-0" {
        "0".into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_peaks() {
        let time: Vec<f64> = (0..10_000).map(|i| i as f64 * 1e-3).collect();
        let mut values = vec![0.0; 10_000];
        values[4321] = 7.0;
        values[8765] = -3.0;
        let points = min_max_decimate(&time, &values, 500);
        assert!(points.len() <= 1000);
        assert!(points.contains(&(time[4321], 7.0)) && points.contains(&(time[8765], -3.0)));
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0), "in time order");
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_text(0.25000000000000006, &(0.0..2.0), 10), "0.25");
        assert_eq!(tick_text(-0.0, &(-1.0..1.0), 6), "0");
        assert_eq!(tick_text(1.5, &(0.0..10.0), 10), "1.5");
        assert_eq!(tick_text(2e7, &(0.0..3e7), 6), "2.00e7");
        // Small signals are in exponent form, but their zero tick is 0 (issue 39).
        assert_eq!(tick_text(-1.36e-20, &(-4e-4..4e-4), 6), "0");
        assert_eq!(tick_text(2e-4, &(-4e-4..4e-4), 6), "2.00e-4");
    }

    #[test]
    fn unknown_signals_list_the_known_ones() {
        let names = vec!["robot.q".to_string(), "wave.y".to_string()];
        assert_eq!(select(&["wave.*"], &names).unwrap(), ["wave.y"]);
        assert_eq!(select(&[], &names).unwrap(), names);
        let e = select(&["robot.tau"], &names).unwrap_err();
        assert!(e.contains("'robot.tau'") && e.contains("robot.q, wave.y"), "{e}");
    }

    #[test]
    fn flat_signals_get_a_visible_range() {
        assert_eq!(value_range([0.0, 0.0].into_iter()), -1.0..1.0);
        let r = value_range([2.0].into_iter());
        assert!(r.start < 2.0 && r.end > 2.0);
    }
}

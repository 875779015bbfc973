//! Video files as content: YUV4MPEG2 (`.y4m`, what `ffmpeg -pix_fmt
//! yuv420p out.y4m` and the Xiph/Netflix test sets provide) and raw I420
//! (`.yuv`, size and rate given separately), read with random access and
//! looped; and a Y4M writer for saving pictures.
//!
//! Readers index every frame's byte offset once at open (a Y4M frame is
//! `FRAME`, optional parameters, a newline, then the planes), so frame `i`
//! is one seek and one read, and any damage (truncation, a missing `FRAME`
//! marker) is reported at open, naming the file, the frame and the reason,
//! rather than surfacing mid-run.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::content::{ensure_size, ContentError, ContentSource};
use crate::picture::{chroma_size, Picture};

/// Longest header line accepted (real ones are under 100 bytes).
const MAX_HEADER: usize = 4096;

/// Where the frames of an opened file are and how to read them.
struct Frames {
    path: PathBuf,
    file: File,
    width: u32,
    height: u32,
    /// Byte offset of each frame's first plane sample.
    offsets: Vec<u64>,
    /// Luma only (Y4M `Cmono`): chroma is filled neutral.
    mono: bool,
}

impl Frames {
    fn read(&mut self, index: u64, out: &mut Picture) -> Result<(), ContentError> {
        let k = (index % self.offsets.len() as u64) as usize;
        ensure_size(out, self.width, self.height);
        let err = |e: std::io::Error| ContentError::format(&self.path, format!("frame {k}: {e}"));
        self.file.seek(SeekFrom::Start(self.offsets[k])).map_err(err)?;
        self.file.read_exact(&mut out.y).map_err(err)?;
        if self.mono {
            out.u.fill(128);
            out.v.fill(128);
        } else {
            self.file.read_exact(&mut out.u).map_err(err)?;
            self.file.read_exact(&mut out.v).map_err(err)?;
        }
        Ok(())
    }

    /// `"<kind> <path> <W>x<H> <detail> fps, <n> frames (looped)"`.
    fn describe(&self, kind: &str, detail: &str) -> String {
        let (path, n) = (self.path.display(), self.offsets.len());
        format!("{kind} {path} {}x{} {detail} fps, {n} frames (looped)", self.width, self.height)
    }

    fn read_or_panic(&mut self, index: u64, out: &mut Picture) {
        // The file was fully indexed and checked at open; failing now means
        // it changed underneath us, which no caller can recover from.
        if let Err(e) = self.read(index, out) {
            panic!("{e}");
        }
    }
}

fn plane_bytes(width: u32, height: u32, mono: bool) -> u64 {
    let (cw, ch) = chroma_size(width, height);
    width as u64 * height as u64 + if mono { 0 } else { 2 * cw as u64 * ch as u64 }
}

/// A YUV4MPEG2 file, 8-bit 4:2:0 (`C420`, `C420jpeg`, `C420paldv`,
/// `C420mpeg2`, or no `C`) or greyscale (`Cmono`). Chroma siting variants
/// are all read as plain I420. Interlacing flags are ignored (frames are
/// taken as progressive). Frame `i` of an `n`-frame file is frame `i mod n`.
pub struct Y4mReader {
    frames: Frames,
    fps_num: u32,
    fps_den: u32,
    colorspace: String,
}

impl Y4mReader {
    /// Open and index `path`. Errors (naming the file): not YUV4MPEG2, a
    /// missing or malformed `W`, `H` or `F`, an unsupported `C` (4:2:2,
    /// 4:4:4, 4:1:1, alpha, or more than 8 bits: convert with
    /// `ffmpeg -i in -pix_fmt yuv420p out.y4m`), no frames, or a frame that
    /// is truncated or lacks its `FRAME` marker.
    pub fn open(path: &Path) -> Result<Y4mReader, ContentError> {
        let mut file = File::open(path).map_err(ContentError::io(path))?;
        let len = file.metadata().map_err(ContentError::io(path))?.len();
        let fail = |r: String| ContentError::format(path, r);
        let header = read_line(&mut file, 0, MAX_HEADER).map_err(ContentError::io(path))?;
        let Some(line) = header else {
            return Err(fail(format!("not a YUV4MPEG2 file: no header line within {MAX_HEADER} bytes")));
        };
        let text = String::from_utf8_lossy(&line);
        let mut tokens = text.trim_end_matches('\r').split(' ').filter(|t| !t.is_empty());
        if tokens.next() != Some("YUV4MPEG2") {
            return Err(fail("not a YUV4MPEG2 file: the header does not start with 'YUV4MPEG2 '".into()));
        }
        let (mut width, mut height, mut fps) = (None, None, None);
        let mut colorspace = "420jpeg".to_string();
        for tok in tokens {
            let (tag, val) = tok.split_at(1);
            let positive = |what: &str| {
                val.parse::<u32>()
                    .ok()
                    .filter(|&v| v > 0)
                    .ok_or_else(|| fail(format!("header field {tok}: {what} must be a positive integer")))
            };
            match tag {
                "W" => width = Some(positive("width")?),
                "H" => height = Some(positive("height")?),
                "F" => {
                    let parsed =
                        val.split_once(':').and_then(|(n, d)| Some((n.parse::<u32>().ok()?, d.parse::<u32>().ok()?)));
                    match parsed {
                        Some((n, d)) if n > 0 && d > 0 => fps = Some((n, d)),
                        _ => {
                            return Err(fail(format!(
                                "header field {tok}: frame rate must be F<num>:<den>, both positive"
                            )))
                        }
                    }
                }
                "C" => {
                    match val {
                        "420" | "420jpeg" | "420paldv" | "420mpeg2" | "mono" => {}
                        _ => {
                            return Err(fail(format!(
                            "header field {tok}: colour space '{val}' is not supported (only 8-bit 4:2:0 and mono); \
                                 convert with ffmpeg -i IN -pix_fmt yuv420p OUT.y4m"
                        )))
                        }
                    }
                    colorspace = val.to_string();
                }
                // Interlacing, aspect ratio, comments/extensions (e.g. XYSCSS)
                // and unknown tags do not affect 8-bit 4:2:0 frame data.
                _ => {}
            }
        }
        let width = width.ok_or_else(|| fail("header has no W (width) field".into()))?;
        let height = height.ok_or_else(|| fail("header has no H (height) field".into()))?;
        let (fps_num, fps_den) = fps.ok_or_else(|| fail("header has no F (frame rate) field".into()))?;
        let mono = colorspace == "mono";
        let frame_bytes = plane_bytes(width, height, mono);
        let mut offsets = Vec::new();
        let mut pos = line.len() as u64 + 1;
        while pos < len {
            let k = offsets.len();
            let marker = read_line(&mut file, pos, 1024).map_err(ContentError::io(path))?;
            let marker = match marker {
                Some(m) if m.starts_with(b"FRAME") => m,
                Some(m) => {
                    let shown = String::from_utf8_lossy(&m[..m.len().min(16)]).into_owned();
                    return Err(fail(format!("frame {k} at byte {pos}: expected a FRAME marker, found {shown:?}")));
                }
                None if len - pos < 1024 && file_tail_starts_with_frame(&mut file, pos, len) => {
                    return Err(fail(format!("frame {k} is truncated: its FRAME line at byte {pos} has no end")));
                }
                None => return Err(fail(format!("frame {k} at byte {pos}: expected a FRAME marker"))),
            };
            let data = pos + marker.len() as u64 + 1;
            if data + frame_bytes > len {
                return Err(fail(format!(
                    "frame {k} is truncated: it needs {frame_bytes} bytes from byte {data} but only {} remain \
                     ({width}x{height} {colorspace})",
                    len - data.min(len)
                )));
            }
            offsets.push(data);
            pos = data + frame_bytes;
        }
        if offsets.is_empty() {
            return Err(fail("has a header but no frames".into()));
        }
        Ok(Y4mReader {
            frames: Frames { path: path.to_path_buf(), file, width, height, offsets, mono },
            fps_num,
            fps_den,
            colorspace,
        })
    }

    /// The header's frame rate as a fraction.
    pub fn fps_fraction(&self) -> (u32, u32) {
        (self.fps_num, self.fps_den)
    }

    /// Read frame `index` (modulo the frame count) into `out`.
    pub fn read_frame(&mut self, index: u64, out: &mut Picture) -> Result<(), ContentError> {
        self.frames.read(index, out)
    }
}

fn file_tail_starts_with_frame(file: &mut File, pos: u64, len: u64) -> bool {
    let mut buf = vec![0u8; (len - pos).min(5) as usize];
    file.seek(SeekFrom::Start(pos)).is_ok() && file.read_exact(&mut buf).is_ok() && b"FRAME".starts_with(&buf)
}

/// The bytes from `pos` up to (not including) the next newline, if one
/// occurs within `max` bytes.
fn read_line(file: &mut File, pos: u64, max: usize) -> std::io::Result<Option<Vec<u8>>> {
    file.seek(SeekFrom::Start(pos))?;
    let mut buf = vec![0u8; max];
    let mut got = 0;
    while got < max {
        let n = file.read(&mut buf[got..])?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[got..got + n].iter().position(|&b| b == b'\n') {
            buf.truncate(got + i);
            return Ok(Some(buf));
        }
        got += n;
    }
    Ok(None)
}

impl ContentSource for Y4mReader {
    fn size(&self) -> (u32, u32) {
        (self.frames.width, self.frames.height)
    }

    fn fps(&self) -> f64 {
        self.fps_num as f64 / self.fps_den as f64
    }

    fn frame_count(&self) -> Option<u64> {
        Some(self.frames.offsets.len() as u64)
    }

    /// # Panics
    /// If the file can no longer be read (it was checked at open).
    fn frame_into(&mut self, index: u64, out: &mut Picture) {
        self.frames.read_or_panic(index, out)
    }

    fn describe(&self) -> String {
        self.frames.describe("y4m", &format!("C{} at {}/{}", self.colorspace, self.fps_num, self.fps_den))
    }
}

/// Raw 8-bit I420 frames back to back (`.yuv`), with size and frame rate
/// given by the caller. Looped like [`Y4mReader`].
pub struct RawYuvReader {
    frames: Frames,
    fps: f64,
}

impl RawYuvReader {
    /// Open `path` as `width`×`height` I420 at `fps`. Errors (naming the
    /// file) if it is empty or its length is not a whole number of frames,
    /// which usually means the size is wrong.
    pub fn open(path: &Path, width: u32, height: u32, fps: f64) -> Result<RawYuvReader, ContentError> {
        let fail = |r: String| ContentError::format(path, r);
        if width == 0 || height == 0 {
            return Err(fail(format!("raw YUV size {width}x{height} is empty")));
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(fail(format!("raw YUV frame rate {fps} is not positive")));
        }
        let file = File::open(path).map_err(ContentError::io(path))?;
        let len = file.metadata().map_err(ContentError::io(path))?.len();
        let fb = plane_bytes(width, height, false);
        let n = len / fb;
        if n == 0 {
            return Err(fail(format!("holds no whole {width}x{height} I420 frame ({len} bytes, a frame is {fb})")));
        }
        if len % fb != 0 {
            return Err(fail(format!(
                "frame {n} is truncated: {} of its {fb} bytes are present ({len} bytes is not a whole number of \
                 {width}x{height} I420 frames; is the size right?)",
                len % fb
            )));
        }
        let offsets = (0..n).map(|k| k * fb).collect();
        Ok(RawYuvReader { frames: Frames { path: path.to_path_buf(), file, width, height, offsets, mono: false }, fps })
    }

    /// Read frame `index` (modulo the frame count) into `out`.
    pub fn read_frame(&mut self, index: u64, out: &mut Picture) -> Result<(), ContentError> {
        self.frames.read(index, out)
    }
}

impl ContentSource for RawYuvReader {
    fn size(&self) -> (u32, u32) {
        (self.frames.width, self.frames.height)
    }

    fn fps(&self) -> f64 {
        self.fps
    }

    fn frame_count(&self) -> Option<u64> {
        Some(self.frames.offsets.len() as u64)
    }

    /// # Panics
    /// If the file can no longer be read (it was checked at open).
    fn frame_into(&mut self, index: u64, out: &mut Picture) {
        self.frames.read_or_panic(index, out)
    }

    fn describe(&self) -> String {
        self.frames.describe("yuv", &format!("at {}", self.fps))
    }
}

/// The frame rate as a fraction: exact for whole rates and the NTSC family
/// (n·1000/1001), else to a millionth.
pub fn fps_fraction(fps: f64) -> (u32, u32) {
    for den in [1u32, 1001] {
        let num = (fps * den as f64).round();
        if num >= 1.0 && num <= u32::MAX as f64 && (num / den as f64 - fps).abs() < 1e-9 * fps.max(1.0) {
            return (num as u32, den);
        }
    }
    let (mut n, mut d) = ((fps * 1e6).round().max(1.0) as u64, 1_000_000u64);
    let g = gcd(n, d);
    n /= g;
    d /= g;
    (n.min(u32::MAX as u64) as u32, d as u32)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Writes pictures to a YUV4MPEG2 file (`C420jpeg`: centred chroma, what
/// [`Picture::from_rgb`] produces and ffmpeg's yuv420p means).
pub struct Y4mWriter {
    path: PathBuf,
    out: BufWriter<File>,
    width: u32,
    height: u32,
    frames: u64,
}

impl Y4mWriter {
    /// Create (or truncate) `path` and write the header.
    pub fn create(path: &Path, width: u32, height: u32, fps: f64) -> Result<Y4mWriter, ContentError> {
        if width == 0 || height == 0 || !(fps.is_finite() && fps > 0.0) {
            return Err(ContentError::format(path, format!("cannot write {width}x{height} at {fps} fps")));
        }
        let file = File::create(path).map_err(ContentError::io(path))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let (n, d) = fps_fraction(fps);
        writeln!(out, "YUV4MPEG2 W{width} H{height} F{n}:{d} Ip A1:1 C420jpeg").map_err(ContentError::io(path))?;
        Ok(Y4mWriter { path: path.to_path_buf(), out, width, height, frames: 0 })
    }

    /// Append one picture; it must have the size given at creation.
    pub fn write(&mut self, pic: &Picture) -> Result<(), ContentError> {
        if (pic.width, pic.height) != (self.width, self.height) {
            return Err(ContentError::format(
                &self.path,
                format!(
                    "frame {}: picture is {}x{} but the file is {}x{}",
                    self.frames, pic.width, pic.height, self.width, self.height
                ),
            ));
        }
        let io = ContentError::io(&self.path);
        let r = self
            .out
            .write_all(b"FRAME\n")
            .and_then(|_| self.out.write_all(&pic.y))
            .and_then(|_| self.out.write_all(&pic.u))
            .and_then(|_| self.out.write_all(&pic.v));
        r.map_err(io)?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Flush buffered frames and close; write errors that dropping the
    /// writer would swallow surface here.
    pub fn finish(mut self) -> Result<(), ContentError> {
        self.out.flush().map_err(ContentError::io(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unique temp file, removed on drop.
    struct Temp(PathBuf);
    impl Temp {
        fn new(name: &str) -> Temp {
            use std::sync::atomic::{AtomicU64, Ordering};
            static N: AtomicU64 = AtomicU64::new(0);
            let k = N.fetch_add(1, Ordering::Relaxed);
            Temp(std::env::temp_dir().join(format!("rtcc-video-y4m-{}-{k}-{name}", std::process::id())))
        }
    }
    impl Drop for Temp {
        fn drop(&mut self) {
            std::fs::remove_file(&self.0).ok();
        }
    }

    fn pic(w: u32, h: u32, k: u8) -> Picture {
        let mut p = Picture::new(w, h);
        p.y.iter_mut().enumerate().for_each(|(i, v)| *v = (i as u8).wrapping_mul(7).wrapping_add(k));
        p.u.iter_mut().enumerate().for_each(|(i, v)| *v = (i as u8).wrapping_add(k).wrapping_mul(3));
        p.v.iter_mut().enumerate().for_each(|(i, v)| *v = 255 - (i as u8).wrapping_add(k));
        p
    }

    fn write_y4m(path: &Path, w: u32, h: u32, fps: f64, n: u8) -> Vec<Picture> {
        let mut wr = Y4mWriter::create(path, w, h, fps).unwrap();
        let pics: Vec<Picture> = (0..n).map(|k| pic(w, h, k * 10)).collect();
        for p in &pics {
            wr.write(p).unwrap();
        }
        assert_eq!(wr.frames(), n as u64);
        wr.finish().unwrap();
        pics
    }

    fn err_of(r: Result<Y4mReader, ContentError>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn writer_reader_round_trip_with_random_access_and_looping() {
        // Odd size: chroma rounds up.
        let t = Temp::new("rt.y4m");
        let pics = write_y4m(&t.0, 17, 9, 30000.0 / 1001.0, 4);
        let head = std::fs::read(&t.0).unwrap();
        assert!(head.starts_with(b"YUV4MPEG2 W17 H9 F30000:1001 "), "{}", String::from_utf8_lossy(&head[..40]));
        let mut r = Y4mReader::open(&t.0).unwrap();
        assert_eq!(r.size(), (17, 9));
        assert_eq!(r.fps_fraction(), (30000, 1001));
        assert!((r.fps() - 29.97002997).abs() < 1e-6);
        assert_eq!(r.frame_count(), Some(4));
        for &i in &[2u64, 0, 3, 1, 1] {
            assert_eq!(r.frame(i), pics[i as usize], "frame {i}");
        }
        // Looping: index modulo the frame count.
        assert_eq!(r.frame(4), pics[0]);
        assert_eq!(r.frame(4 * 1000 + 3), pics[3]);
        let mut out = Picture::new(2, 2);
        r.frame_into(6, &mut out);
        assert_eq!(out, pics[2]);
        assert!(r.describe().contains("4 frames"), "{}", r.describe());
    }

    #[test]
    fn frame_parameters_and_header_variants_are_accepted() {
        let t = Temp::new("params.y4m");
        let p = pic(4, 2, 1);
        let mut bytes = b"YUV4MPEG2 W4 H2 F25:1 It A0:0 C420mpeg2 XYSCSS=420MPEG2\n".to_vec();
        for _ in 0..2 {
            bytes.extend_from_slice(b"FRAME Ixyz Xfoo=bar\n");
            bytes.extend_from_slice(&p.y);
            bytes.extend_from_slice(&p.u);
            bytes.extend_from_slice(&p.v);
        }
        std::fs::write(&t.0, &bytes).unwrap();
        let mut r = Y4mReader::open(&t.0).unwrap();
        assert_eq!((r.fps(), r.frame_count()), (25.0, Some(2)));
        assert_eq!(r.frame(1), p);
    }

    #[test]
    fn mono_files_get_neutral_chroma() {
        let t = Temp::new("mono.y4m");
        let mut bytes = b"YUV4MPEG2 W4 H2 F30:1 Cmono\n".to_vec();
        for k in 0..3u8 {
            bytes.extend_from_slice(b"FRAME\n");
            bytes.extend_from_slice(&[k * 50; 8]);
        }
        std::fs::write(&t.0, &bytes).unwrap();
        let mut r = Y4mReader::open(&t.0).unwrap();
        assert_eq!(r.frame_count(), Some(3));
        let f = r.frame(2);
        assert_eq!(f.y, vec![100; 8]);
        assert_eq!((f.u.clone(), f.v.clone()), (vec![128; 2], vec![128; 2]));
    }

    #[test]
    fn malformed_headers_are_reported_with_file_and_field() {
        let cases: &[(&[u8], &str)] = &[
            (b"P5 4 4 255\n", "YUV4MPEG2"),
            (b"YUV4MPEG2 W4 H4 F30:1 C422\nFRAME\n", "C422"),
            (b"YUV4MPEG2 W4 H4 F30:1 C444\nFRAME\n", "C444"),
            (b"YUV4MPEG2 W4 H4 F30:1 C420p10 XYSCSS=420P10\nFRAME\n", "C420p10"),
            (b"YUV4MPEG2 W4 H4 F30:1 Cmono16\nFRAME\n", "Cmono16"),
            (b"YUV4MPEG2 H4 F30:1\nFRAME\n", "no W"),
            (b"YUV4MPEG2 W4 F30:1\nFRAME\n", "no H"),
            (b"YUV4MPEG2 W4 H4\nFRAME\n", "no F"),
            (b"YUV4MPEG2 W4 H4 F30\nFRAME\n", "F30"),
            (b"YUV4MPEG2 W4 H4 F30:0\nFRAME\n", "F30:0"),
            (b"YUV4MPEG2 Wx H4 F30:1\nFRAME\n", "Wx"),
            (b"YUV4MPEG2 W0 H4 F30:1\nFRAME\n", "W0"),
            (b"YUV4MPEG2 W4 H4 F30:1\n", "no frames"),
            (b"YUV4MPEG2 W4 H4 F30:1 no newline", "no header line"),
        ];
        for (k, (bytes, needle)) in cases.iter().enumerate() {
            let t = Temp::new(&format!("bad{k}.y4m"));
            std::fs::write(&t.0, bytes).unwrap();
            let msg = err_of(Y4mReader::open(&t.0));
            assert!(msg.contains(&t.0.display().to_string()), "case {k}: {msg}");
            assert!(msg.contains(needle), "case {k}: expected {needle:?} in {msg}");
        }
        let e = err_of(Y4mReader::open(Path::new("/nonexistent/dir/clip.y4m")));
        assert!(e.contains("/nonexistent/dir/clip.y4m"), "{e}");
    }

    #[test]
    fn truncated_and_damaged_files_name_the_frame() {
        let t = Temp::new("trunc.y4m");
        write_y4m(&t.0, 8, 4, 30.0, 3);
        let full = std::fs::read(&t.0).unwrap();
        // Cut the last frame's data short.
        std::fs::write(&t.0, &full[..full.len() - 5]).unwrap();
        let msg = err_of(Y4mReader::open(&t.0));
        assert!(msg.contains("frame 2") && msg.contains("truncated"), "{msg}");
        assert!(msg.contains(&t.0.display().to_string()), "{msg}");
        // Cut inside the third FRAME marker.
        let frame_len = 6 + 8 * 4 + 2 * 4 * 2;
        let header_len = full.len() - 3 * frame_len;
        std::fs::write(&t.0, &full[..header_len + 2 * frame_len + 3]).unwrap();
        let msg = err_of(Y4mReader::open(&t.0));
        assert!(msg.contains("frame 2") && msg.contains("truncated"), "{msg}");
        // A corrupted marker.
        let mut bad = full.clone();
        bad[header_len + frame_len] = b'X';
        std::fs::write(&t.0, &bad).unwrap();
        let msg = err_of(Y4mReader::open(&t.0));
        assert!(msg.contains("frame 1") && msg.contains("FRAME"), "{msg}");
    }

    #[test]
    fn raw_yuv_round_trip_and_errors() {
        let t = Temp::new("clip.yuv");
        let pics: Vec<Picture> = (0..3).map(|k| pic(6, 4, k * 5)).collect();
        let mut bytes = Vec::new();
        for p in &pics {
            bytes.extend_from_slice(&p.y);
            bytes.extend_from_slice(&p.u);
            bytes.extend_from_slice(&p.v);
        }
        std::fs::write(&t.0, &bytes).unwrap();
        let mut r = RawYuvReader::open(&t.0, 6, 4, 24.0).unwrap();
        assert_eq!((r.size(), r.fps(), r.frame_count()), ((6, 4), 24.0, Some(3)));
        assert_eq!(r.frame(1), pics[1]);
        assert_eq!(r.frame(5), pics[2]);
        assert_eq!(r.frame(0), pics[0]);
        // Wrong size: not a whole number of frames.
        let e = RawYuvReader::open(&t.0, 8, 4, 24.0).err().unwrap().to_string();
        assert!(e.contains("truncated") && e.contains(&t.0.display().to_string()) && e.contains("frame 2"), "{e}");
        // Too short for one frame.
        std::fs::write(&t.0, &bytes[..10]).unwrap();
        let e = RawYuvReader::open(&t.0, 6, 4, 24.0).err().unwrap().to_string();
        assert!(e.contains("no whole"), "{e}");
        assert!(RawYuvReader::open(&t.0, 6, 4, 0.0).is_err());
        assert!(RawYuvReader::open(Path::new("/nonexistent.yuv"), 6, 4, 30.0).is_err());
    }

    #[test]
    fn writer_rejects_wrong_sizes() {
        let t = Temp::new("w.y4m");
        let mut w = Y4mWriter::create(&t.0, 8, 8, 30.0).unwrap();
        let e = w.write(&Picture::new(4, 4)).unwrap_err().to_string();
        assert!(e.contains("frame 0") && e.contains("4x4") && e.contains("8x8"), "{e}");
        assert!(Y4mWriter::create(&t.0, 0, 8, 30.0).is_err());
    }

    #[test]
    fn fps_fractions() {
        assert_eq!(fps_fraction(30.0), (30, 1));
        assert_eq!(fps_fraction(30000.0 / 1001.0), (30000, 1001));
        assert_eq!(fps_fraction(24000.0 / 1001.0), (24000, 1001));
        assert_eq!(fps_fraction(12.5), (25, 2));
        let (n, d) = fps_fraction(7.3);
        assert!((n as f64 / d as f64 - 7.3).abs() < 1e-9);
    }
}

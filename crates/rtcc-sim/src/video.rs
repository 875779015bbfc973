//! Scenario glue for real video: `encoder = { kind = "vp8" | "h264", ... }`,
//! `content = ...`, and the saved-video sink behind `--save-video`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rtcc_core::controller::{ConfigError, Param, ParamInfo, Params};
use rtcc_core::resolution::{Resolution, ResolutionPolicy};
use rtcc_core::units::{DataRate, Duration};
use rtcc_video::codec::{new_encoder, Codec, EncoderSettings, VideoEncoder};
use rtcc_video::content::Motion;
use rtcc_video::real::{ContentSpec, ScreenSink, VideoSpec};
use rtcc_video::Picture;

/// Encoder kinds that are real codecs.
pub const REAL_KINDS: &[&str] = &["vp8", "h264"];

/// WebRTC's VP8 default key-frame distance, 3000 frames (100 s at 30 fps).
const DEFAULT_KEY_INTERVAL: Duration = Duration::from_secs(100);

/// libvpx `cpu_used`: WebRTC desktop uses -6 (`EncoderSettings::webrtc`);
/// 0 and above adapt to the wall-clock encode time, which would make runs
/// irreproducible.
const VP8_SPEED: Param<i32> = Param::integer("speed", -6, -16, -1, "VP8: libvpx cpu_used (WebRTC desktop -6)");
/// OpenH264 complexity: WebRTC never sets it, so LOW_COMPLEXITY (0), the
/// library's default (rtcc-video h264.rs `complexity`).
const H264_SPEED: Param<i32> = Param::integer("speed", 0, 0, 2, "H.264: OpenH264 complexity, 0 low..2 high");
const KEY_INTERVAL: Param<Option<Duration>> = Param::optional_duration(
    "key_interval",
    Some(DEFAULT_KEY_INTERVAL),
    Duration::ZERO,
    Duration::MAX,
    "none",
    "time between periodic key frames (WebRTC: 3000 frames); \"none\" = first and requested only",
);
const FRAME_DROPPING: Param<bool> =
    Param::flag("frame_dropping", true, "let the codec's rate control drop frames, as WebRTC");
const THREADS: Param<u32> = Param::integer("threads", 1, 1, 16, "encoder threads (1 keeps runs byte-identical)");

const VP8_PARAMS: &[ParamInfo] = &[VP8_SPEED.info(), KEY_INTERVAL.info(), FRAME_DROPPING.info(), THREADS.info()];
const H264_PARAMS: &[ParamInfo] = &[H264_SPEED.info(), KEY_INTERVAL.info(), FRAME_DROPPING.info(), THREADS.info()];

/// Parameters of a real codec's encoder table; empty for other kinds.
pub fn real_params(kind: &str) -> &'static [ParamInfo] {
    match Codec::parse(kind) {
        Some(Codec::Vp8) => VP8_PARAMS,
        Some(Codec::H264) => H264_PARAMS,
        None => &[],
    }
}

/// A real-codec encoder table, before its content is known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodecChoice {
    pub codec: Codec,
    pub speed: Option<i32>,
    pub key_interval: Option<Duration>,
    pub frame_dropping: bool,
    pub threads: u32,
}

pub fn parse_encoder(kind: &str, p: &Params) -> Result<CodecChoice, (String, String)> {
    let e = |er: ConfigError| {
        let er = er.within("encoder");
        (er.field, er.reason)
    };
    let codec = Codec::parse(kind).ok_or_else(|| e(ConfigError::invalid("kind", format!("unknown codec '{kind}'"))))?;
    p.check_known(real_params(kind)).map_err(e)?;
    let speed = match codec {
        Codec::Vp8 => p.get(&VP8_SPEED),
        Codec::H264 => p.get(&H264_SPEED),
    };
    Ok(CodecChoice {
        codec,
        speed: Some(speed.map_err(e)?),
        key_interval: p.get(&KEY_INTERVAL).map_err(e)?,
        frame_dropping: p.get(&FRAME_DROPPING).map_err(e)?,
        threads: p.get(&THREADS).map_err(e)?,
    })
}

/// `content = "talking-head" | "game"` or a table:
/// `{ kind = "game", resolution = "720p", photos = ["a.png"], seed = 3 }`,
/// `{ file = "clip.y4m" }`, `{ file = "clip.yuv", size = "352x288", fps = 30 }`.
/// Returns the content (relative paths against `base`) and the motion kind
/// for the quality model.
pub fn parse_content(
    v: Option<&toml::Value>,
    resolution: ResolutionPolicy,
    base: &Path,
    media: &HashMap<PathBuf, PathBuf>,
) -> Result<(ContentSpec, Option<Motion>), (String, String)> {
    let e = |k: &str, r: String| (if k.is_empty() { "content".to_string() } else { format!("content.{k}") }, r);
    // Generated content is made at the largest resolution the flow sends
    // (1080p for Dumbo's Table 5.1).
    let default_res = match resolution {
        ResolutionPolicy::Fixed(r) => r,
        ResolutionPolicy::Dumbo { .. } => Resolution::R1080,
    };
    let motion_of =
        |s: &str| Motion::parse(s).ok_or_else(|| e("kind", format!("'{s}' is not one of talking-head, game")));
    let generated = |motion, res: Resolution, photos, seed| {
        let (width, height) = res.size();
        ContentSpec::Generated { motion, width, height, photos, seed }
    };
    let t = match v {
        None => return Ok((generated(Motion::TalkingHead, default_res, vec![], 1), None)),
        Some(toml::Value::String(s)) => {
            let m = motion_of(s).map_err(|(_, r)| e("", r))?;
            return Ok((generated(m, default_res, vec![], 1), Some(m)));
        }
        Some(toml::Value::Table(t)) => t,
        Some(_) => return Err(e("", "must be a content kind or a table".into())),
    };
    let known = ["kind", "resolution", "photos", "seed", "file", "size", "fps"];
    if let Some(k) = t.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(e(k, format!("unknown key (known: {})", known.join(", "))));
    }
    let str_of = |k: &str| -> Result<Option<&str>, (String, String)> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(e(k, "must be a string".into())),
        }
    };
    if let Some(file) = str_of("file")? {
        for k in ["kind", "resolution", "photos", "seed"] {
            if t.contains_key(k) {
                return Err(e(k, "does not apply to a file".into()));
            }
        }
        let path = base.join(file);
        if path.is_dir() {
            return Err(e("file", format!("{} is a folder, not a video file", path.display())));
        }
        if !path.is_file() {
            return Err(e("file", format!("{} does not exist", path.display())));
        }
        // Container files arrive converted (keys are canonical paths).
        let path = path.canonicalize().ok().and_then(|c| media.get(&c).cloned()).unwrap_or(path);
        let ext = path.extension().and_then(|x| x.to_str()).unwrap_or("").to_ascii_lowercase();
        if ext != "yuv" {
            if let Some(k) = ["size", "fps"].into_iter().find(|k| t.contains_key(*k)) {
                return Err(e(k, "applies only to a .yuv file (a Y4M header gives it)".into()));
            }
        }
        return Ok((
            match ext.as_str() {
                "y4m" => ContentSpec::Y4m { path },
                "yuv" => {
                    let size = str_of("size")?.ok_or_else(|| e("size", "a .yuv file needs size = \"WxH\"".into()))?;
                    let (w, h) = size
                        .split_once('x')
                        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
                        .filter(|&(w, h)| (2..=8192).contains(&w) && (2..=8192).contains(&h))
                        .ok_or_else(|| e("size", format!("'{size}' is not WxH with 2..8192 pixels each way")))?;
                    let fps = match t.get("fps") {
                        None => 30.0,
                        Some(v) => v
                            .as_float()
                            .or_else(|| v.as_integer().map(|i| i as f64))
                            .filter(|f| (1.0..=240.0).contains(f))
                            .ok_or_else(|| e("fps", "must be a number in 1..240".into()))?,
                    };
                    ContentSpec::Yuv { path, width: w, height: h, fps }
                }
                _ => {
                    return Err(e(
                        "file",
                        format!(
                            "{}: only .y4m and .yuv are read here; MP4 and other containers are converted by the \
                             Python package (rtcc run / rtcc.simulate)",
                            path.display()
                        ),
                    ))
                }
            },
            None,
        ));
    }
    for k in ["size", "fps"] {
        if t.contains_key(k) {
            return Err(e(k, "applies only to a .yuv file".into()));
        }
    }
    let motion = motion_of(str_of("kind")?.unwrap_or("talking-head"))?;
    let res = match str_of("resolution")? {
        None => default_res,
        Some(r) => Resolution::parse(r)
            .ok_or_else(|| e("resolution", format!("'{r}' is not one of 180p, 360p, 720p, 1080p")))?,
    };
    let photos = match t.get("photos") {
        None => vec![],
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| match v.as_str() {
                Some(s) if base.join(s).is_file() => Ok(base.join(s)),
                Some(s) => Err(e("photos", format!("{} does not exist", base.join(s).display()))),
                None => Err(e("photos", "must be a list of PNG file names".into())),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(e("photos", "must be a list of PNG file names".into())),
    };
    let seed = match t.get("seed") {
        None => 1,
        Some(toml::Value::Integer(i)) if *i >= 0 => *i as u64,
        Some(_) => return Err(e("seed", "must be a non-negative integer".into())),
    };
    Ok((generated(motion, res, photos, seed), Some(motion)))
}

/// Default photographs for generated content, found in `dir` (the Python
/// package passes scikit-image's data folder): a portrait for the talking
/// head; a scene and sprite sources for the game.
pub fn default_photos(motion: Motion, dir: &Path) -> Vec<PathBuf> {
    let names: &[&str] = match motion {
        Motion::TalkingHead => &["astronaut.png"],
        Motion::Game => &["coffee.png", "chelsea.png", "motorcycle_left.png"],
    };
    let found: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).filter(|p| p.is_file()).collect();
    if found.len() == names.len() {
        found
    } else {
        vec![]
    }
}

/// Build a flow's `VideoSpec`.
pub fn video_spec(c: CodecChoice, content: ContentSpec) -> VideoSpec {
    VideoSpec {
        codec: c.codec,
        speed: c.speed,
        key_interval: c.key_interval,
        frame_dropping: c.frame_dropping,
        threads: c.threads,
        content,
    }
}

/// Bitrate of the saved video: near-transparent (about 0.2 bit/pixel).
fn save_rate(w: u32, h: u32, fps: f64) -> u32 {
    ((w * h) as f64 * fps * 0.2).clamp(2e6, 40e6) as u32
}

/// One saved stream: pictures encoded with a real codec into an elementary
/// stream (H.264 Annex B, or VP8 in IVF when only libvpx is present), which
/// the Python package turns into MP4.
struct Stream {
    enc: Box<dyn VideoEncoder>,
    out: BufWriter<File>,
    path: PathBuf,
    codec: Codec,
    frames: u32,
}

impl Stream {
    fn create(dir: &Path, name: &str, w: u32, h: u32, fps: f64) -> Result<Stream, String> {
        let codec = if Codec::H264.available().is_ok() { Codec::H264 } else { Codec::Vp8 };
        codec.available().map_err(|e| format!("saving video: {e}"))?;
        let mut s = EncoderSettings::webrtc(codec, w, h, fps, save_rate(w, h, fps));
        s.frame_dropping = false;
        s.key_interval = (fps * 2.0).round() as u32;
        let enc = new_encoder(&s).map_err(|e| format!("saving video: {e}"))?;
        let path = dir.join(format!("{name}.{}", if codec == Codec::H264 { "h264" } else { "ivf" }));
        let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut out = BufWriter::new(file);
        if codec == Codec::Vp8 {
            // IVF header (32 bytes): signature, version, header size, fourcc,
            // size, timebase (1/fps in integer units), frame count (patched
            // never: readers accept 0), unused.
            let fps_n = (fps * 1000.0).round() as u32;
            let mut hdr = Vec::with_capacity(32);
            hdr.extend_from_slice(b"DKIF");
            hdr.extend_from_slice(&0u16.to_le_bytes());
            hdr.extend_from_slice(&32u16.to_le_bytes());
            hdr.extend_from_slice(b"VP80");
            hdr.extend_from_slice(&(w as u16).to_le_bytes());
            hdr.extend_from_slice(&(h as u16).to_le_bytes());
            hdr.extend_from_slice(&fps_n.to_le_bytes());
            hdr.extend_from_slice(&1000u32.to_le_bytes());
            hdr.extend_from_slice(&0u32.to_le_bytes());
            hdr.extend_from_slice(&0u32.to_le_bytes());
            out.write_all(&hdr).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(Stream { enc, out, path, codec, frames: 0 })
    }

    fn write(&mut self, pic: &Picture) -> Result<(), String> {
        let p = self.enc.encode(pic, false).map_err(|e| format!("saving video: {e}"))?;
        let io = |e: std::io::Error| format!("{}: {e}", self.path.display());
        if let Some(p) = p {
            if self.codec == Codec::Vp8 {
                self.out.write_all(&(p.data.len() as u32).to_le_bytes()).map_err(io)?;
                self.out.write_all(&u64::from(self.frames).to_le_bytes()).map_err(io)?;
            }
            self.out.write_all(&p.data).map_err(io)?;
        }
        self.frames += 1;
        Ok(())
    }
}

/// `--save-video`: the received video as the viewer saw it (one picture per
/// frame instant, freezes included), and a side-by-side with the source,
/// labelled with the controller and the displayed frame's target bitrate.
pub struct SaveVideo {
    received: Stream,
    side: Stream,
    label: String,
    fps: f64,
    n: u64,
}

impl SaveVideo {
    /// Streams `<dir>/<flow>.received.*` and `<dir>/<flow>.side_by_side.*`.
    pub fn create(dir: &Path, flow: &str, size: (u32, u32), fps: f64, label: &str) -> Result<SaveVideo, String> {
        // The flow's name becomes a file name inside `dir`: nothing that
        // could leave it (the rule the Python package documents).
        let safe = !flow.is_empty()
            && flow.len() <= 64
            && !flow.starts_with('.')
            && flow.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !safe {
            return Err(format!(
                "flow name '{}' cannot be used in a file name (letters, digits, '-', '_', '.', not starting with '.', at most 64)",
                flow.escape_default()
            ));
        }
        let (w, h) = size;
        Ok(SaveVideo {
            received: Stream::create(dir, &format!("{flow}.received"), w, h, fps)?,
            side: Stream::create(dir, &format!("{flow}.side_by_side"), w * 2, h, fps)?,
            label: label.to_string(),
            fps,
            n: 0,
        })
    }
}

impl SaveVideo {
    /// The elementary-stream files this sink writes.
    pub fn paths(&self) -> [PathBuf; 2] {
        [self.received.path.clone(), self.side.path.clone()]
    }
}

impl ScreenSink for SaveVideo {
    fn screen(&mut self, shown: &Picture, source: &Picture, target: DataRate) -> Result<(), String> {
        self.received.write(shown)?;
        let mut sbs = Picture::side_by_side(source, shown);
        let scale = (shown.height / 240).max(1);
        sbs.draw_text(8, 8, "source", scale);
        let t = self.n as f64 / self.fps;
        let text = format!("{}  {:.0} kbps  t={t:.1}s", self.label, target.kbps_f64());
        sbs.draw_text(shown.width + 8, 8, &text, scale);
        self.side.write(&sbs)?;
        self.n += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), String> {
        for s in [&mut self.received, &mut self.side] {
            s.out.flush().map_err(|e| format!("{}: {e}", s.path.display()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_video_names_stay_inside_the_folder() {
        let dir = std::env::temp_dir().join(format!("rtcc-video-names-{}", std::process::id()));
        for bad in ["../x", "/etc/x", "a/b", ".hidden", "", "x\u{0}y", &"a".repeat(65)] {
            let e = SaveVideo::create(&dir, bad, (64, 64), 30.0, "l").err().expect("refused");
            assert!(e.contains("cannot be used in a file name"), "{bad}: {e}");
        }
        assert!(!dir.exists(), "nothing written for refused names");
    }
}

//! The Dependency Descriptor RTP header extension (AV1 RTP payload
//! specification, Appendix A; libwebrtc sends it for VP8, VP9, AV1 and H.264
//! alike): every packet of a frame says whether it starts or ends the frame,
//! the frame's 16-bit number and its template; the first packet of a key
//! frame carries the template structure (A.8.2) the templates refer to.
//!
//! Bit syntax as in A.8.2 (`f(n)` most significant bit first, `ns(n)`
//! non-symmetric). Fields that need the structure (custom DTIs and chains)
//! are read against the structure attached to the same packet or, failing
//! that, the one the caller passes ([`DependencyDescriptor::decode_with`]).

use crate::{Wire, WireError};

const WHAT: &str = "dependency descriptor";

pub const URI: &str = "https://aomediacodec.github.io/av1-rtp-spec/#dependency-descriptor-rtp-header-extension";

/// A.8.2: the template id is 6 bits, so at most 64 templates.
pub const MAX_TEMPLATES: usize = 64;
/// A.8.2: dt_cnt_minus_one is 5 bits.
pub const MAX_DECODE_TARGETS: usize = 32;

/// Decode target indication (A.8.3, Table A.1), 2 bits.
pub mod dti {
    pub const NOT_PRESENT: u8 = 0;
    pub const DISCARDABLE: u8 = 1;
    pub const SWITCH: u8 = 2;
    pub const REQUIRED: u8 = 3;
}

/// One frame template (A.8.2 template_layers, template_dtis, template_fdiffs,
/// template_chains).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrameTemplate {
    pub spatial_id: u8,
    pub temporal_id: u8,
    /// One 2-bit DTI per decode target.
    pub dtis: Vec<u8>,
    /// Frame number differences to the frames it depends on, 1..=16 each.
    pub fdiffs: Vec<u8>,
    /// One 4-bit difference per chain.
    pub chain_fdiffs: Vec<u8>,
}

/// The template dependency structure (A.8.2).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrameDependencyStructure {
    /// 6 bits: template id of `templates[0]`.
    pub template_id_offset: u8,
    /// DtCnt, 1..=32.
    pub decode_targets: u8,
    /// In template_layers order: spatial id never decreases; within one
    /// spatial layer the temporal id never decreases and steps by at most 1.
    pub templates: Vec<FrameTemplate>,
    /// Chains (chain_cnt, 0..=decode targets).
    pub chains: u8,
    /// The chain protecting each decode target (`decode_target_protected_by`);
    /// empty without chains.
    pub protected_by: Vec<u8>,
    /// Render width and height per spatial layer, if present.
    pub resolutions: Option<Vec<(u32, u32)>>,
}

impl FrameDependencyStructure {
    /// One layer, one decode target: a key frame (template 0: no
    /// dependencies, switch indication) and a delta frame (template 1:
    /// depends on the frame before it), as libwebrtc's L1T1.
    pub fn single_layer() -> Self {
        FrameDependencyStructure {
            template_id_offset: 0,
            decode_targets: 1,
            templates: vec![
                FrameTemplate { dtis: vec![dti::SWITCH], ..FrameTemplate::default() },
                FrameTemplate { dtis: vec![dti::SWITCH], fdiffs: vec![1], ..FrameTemplate::default() },
            ],
            chains: 0,
            protected_by: Vec::new(),
            resolutions: None,
        }
    }

    /// The template a frame's template id names (A.8.2 frame_dependency_definition).
    pub fn template(&self, template_id: u8) -> Option<&FrameTemplate> {
        let index = (usize::from(template_id & 0x3f) + 64 - usize::from(self.template_id_offset & 0x3f)) % 64;
        self.templates.get(index)
    }

    fn max_spatial_id(&self) -> u8 {
        self.templates.last().map_or(0, |t| t.spatial_id)
    }

    /// The ranges and the order `encode` needs to write it as it reads back.
    pub fn check(&self) -> Result<(), WireError> {
        let dt = usize::from(self.decode_targets);
        let bad = |field, reason: String| Err(WireError::invalid(WHAT, field, reason));
        if !(1..=MAX_DECODE_TARGETS).contains(&dt) {
            return bad("decode_targets", format!("{dt}, not 1..=32"));
        }
        if self.templates.is_empty() || self.templates.len() > MAX_TEMPLATES {
            return bad("templates", format!("{} templates, not 1..=64", self.templates.len()));
        }
        if self.template_id_offset > 0x3f {
            return bad("template_id_offset", format!("{} does not fit 6 bits", self.template_id_offset));
        }
        let chains = usize::from(self.chains);
        if chains > dt
            || (chains > 0 && self.protected_by.len() != dt)
            || (chains == 0 && !self.protected_by.is_empty())
        {
            return bad(
                "chains",
                format!("{chains} chains with {} protected_by for {dt} targets", self.protected_by.len()),
            );
        }
        if self.protected_by.iter().any(|&c| usize::from(c) >= chains) {
            return bad("protected_by", "names a chain that does not exist".into());
        }
        let first = &self.templates[0];
        if first.spatial_id != 0 || first.temporal_id != 0 {
            return bad("templates", "the first template is not spatial 0, temporal 0".into());
        }
        for (i, t) in self.templates.iter().enumerate() {
            if t.dtis.len() != dt || t.dtis.iter().any(|&d| d > 3) {
                return bad("dtis", format!("template {i}: {} DTIs of 2 bits for {dt} targets", t.dtis.len()));
            }
            if t.fdiffs.iter().any(|&f| !(1..=16).contains(&f)) {
                return bad("fdiffs", format!("template {i}: an fdiff outside 1..=16"));
            }
            if t.chain_fdiffs.len() != chains || t.chain_fdiffs.iter().any(|&f| f > 15) {
                return bad("chain_fdiffs", format!("template {i}: not {chains} values of 4 bits"));
            }
            if i > 0 && layer_step(&self.templates[i - 1], t).is_none() {
                return bad("templates", format!("template {i} does not follow its predecessor's layer (A.8.2)"));
            }
        }
        if let Some(r) = &self.resolutions {
            let fits = |v: u32| (1..=1 << 16).contains(&v);
            if r.len() != usize::from(self.max_spatial_id()) + 1 || r.iter().any(|&(w, h)| !fits(w) || !fits(h)) {
                return bad("resolutions", "not one size of 1..=65536 per spatial layer".into());
            }
        }
        Ok(())
    }

    fn write(&self, w: &mut BitWriter) {
        w.put(u64::from(self.template_id_offset & 0x3f), 6);
        w.put(u64::from(self.decode_targets.saturating_sub(1) & 0x1f), 5);
        for pair in self.templates.windows(2) {
            w.put(u64::from(layer_step(&pair[0], &pair[1]).unwrap_or(0)), 2);
        }
        w.put(3, 2);
        for t in &self.templates {
            for &d in &t.dtis {
                w.put(u64::from(d & 3), 2);
            }
        }
        for t in &self.templates {
            for &f in &t.fdiffs {
                w.put(1, 1);
                w.put(u64::from(f.saturating_sub(1) & 0xf), 4);
            }
            w.put(0, 1);
        }
        let dt = u32::from(self.decode_targets);
        w.put_ns(u32::from(self.chains), dt + 1);
        if self.chains > 0 {
            for &c in &self.protected_by {
                w.put_ns(u32::from(c), u32::from(self.chains));
            }
            for t in &self.templates {
                for &f in &t.chain_fdiffs {
                    w.put(u64::from(f & 0xf), 4);
                }
            }
        }
        w.put(u64::from(self.resolutions.is_some()), 1);
        for &(width, height) in self.resolutions.iter().flatten() {
            w.put(u64::from(width.saturating_sub(1)), 16);
            w.put(u64::from(height.saturating_sub(1)), 16);
        }
    }

    fn read(r: &mut BitReader) -> Result<Self, WireError> {
        let template_id_offset = r.get(6)? as u8;
        let decode_targets = r.get(5)? as u8 + 1;
        let dt = usize::from(decode_targets);
        let mut templates = Vec::new();
        let (mut spatial_id, mut temporal_id) = (0u8, 0u8);
        loop {
            if templates.len() == MAX_TEMPLATES {
                return Err(WireError::invalid(WHAT, "templates", "more than 64 templates"));
            }
            templates.push(FrameTemplate { spatial_id, temporal_id, ..FrameTemplate::default() });
            match r.get(2)? {
                0 => {}
                1 => temporal_id += 1,
                2 => (spatial_id, temporal_id) = (spatial_id + 1, 0),
                _ => break,
            }
        }
        for t in &mut templates {
            t.dtis = (0..dt).map(|_| r.get(2).map(|v| v as u8)).collect::<Result<_, _>>()?;
        }
        for t in &mut templates {
            while r.get(1)? == 1 {
                t.fdiffs.push(r.get(4)? as u8 + 1);
            }
        }
        let chains = r.get_ns(decode_targets as u32 + 1)? as u8;
        let mut protected_by = Vec::new();
        if chains > 0 {
            protected_by = (0..dt).map(|_| r.get_ns(u32::from(chains)).map(|v| v as u8)).collect::<Result<_, _>>()?;
            for t in &mut templates {
                t.chain_fdiffs = (0..chains).map(|_| r.get(4).map(|v| v as u8)).collect::<Result<_, _>>()?;
            }
        }
        let resolutions = if r.get(1)? == 1 {
            Some(
                (0..=spatial_id)
                    .map(|_| Ok((r.get(16)? as u32 + 1, r.get(16)? as u32 + 1)))
                    .collect::<Result<_, _>>()?,
            )
        } else {
            None
        };
        Ok(FrameDependencyStructure {
            template_id_offset,
            decode_targets,
            templates,
            chains,
            protected_by,
            resolutions,
        })
    }
}

/// next_layer_idc from `a` to `b` (A.8.2): 0 same layer, 1 next temporal, 2
/// next spatial at temporal 0.
fn layer_step(a: &FrameTemplate, b: &FrameTemplate) -> Option<u8> {
    if (b.spatial_id, b.temporal_id) == (a.spatial_id, a.temporal_id) {
        Some(0)
    } else if b.spatial_id == a.spatial_id && b.temporal_id == a.temporal_id.checked_add(1)? {
        Some(1)
    } else if b.spatial_id == a.spatial_id.checked_add(1)? && b.temporal_id == 0 {
        Some(2)
    } else {
        None
    }
}

/// `id` names a template of `s` (A.8.2 frame_dependency_definition).
fn has_template(s: &FrameDependencyStructure, id: u8) -> Result<(), WireError> {
    match s.template(id) {
        Some(_) => Ok(()),
        None => Err(WireError::invalid(WHAT, "template_id", format!("{id} names no template"))),
    }
}

/// The custom fields are as many as `s` reads: a DTI per decode target, an
/// active bit per decode target, a difference per chain.
fn fields_fit(e: &ExtendedFields, s: &FrameDependencyStructure) -> Result<(), WireError> {
    let dt = usize::from(s.decode_targets);
    if e.custom_dtis.as_ref().is_some_and(|d| d.len() != dt)
        || e.active_decode_targets.is_some_and(|a| dt < 32 && a >> dt != 0)
        || e.custom_chains.as_ref().is_some_and(|c| c.len() != usize::from(s.chains))
    {
        return Err(WireError::invalid(WHAT, "custom fields", "sizes differ from the structure's"));
    }
    Ok(())
}

/// The extended fields (A.8.2 extended_descriptor_fields) and the frame's
/// custom dependency fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExtendedFields {
    pub structure: Option<FrameDependencyStructure>,
    /// `DtCnt` bits, when present.
    pub active_decode_targets: Option<u32>,
    /// One 2-bit DTI per decode target, replacing the template's.
    pub custom_dtis: Option<Vec<u8>>,
    /// Frame number differences, 1..=4096 each (A.8.2 frame_fdiffs).
    pub custom_fdiffs: Option<Vec<u16>>,
    /// One 8-bit difference per chain.
    pub custom_chains: Option<Vec<u8>>,
}

/// One packet's descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DependencyDescriptor {
    pub start_of_frame: bool,
    pub end_of_frame: bool,
    /// 6 bits.
    pub template_id: u8,
    pub frame_number: u16,
    /// `None`: the 3-byte form (A.8.2 no_extended_descriptor_fields).
    pub extended: Option<ExtendedFields>,
}

impl DependencyDescriptor {
    /// The structure this packet carries, if any.
    pub fn structure(&self) -> Option<&FrameDependencyStructure> {
        self.extended.as_ref()?.structure.as_ref()
    }

    /// Parses `buf` (the extension element's data), reading custom DTIs and
    /// chains against the attached structure or else `known`; without
    /// either they cannot be read and are an error, as is a template id the
    /// structure does not have.
    pub fn decode_with(buf: &[u8], known: Option<&FrameDependencyStructure>) -> Result<Self, WireError> {
        WireError::need(WHAT, buf, 3)?;
        let mut r = BitReader::new(buf);
        let mut d = DependencyDescriptor {
            start_of_frame: r.get(1)? == 1,
            end_of_frame: r.get(1)? == 1,
            template_id: r.get(6)? as u8,
            frame_number: r.get(16)? as u16,
            extended: None,
        };
        if buf.len() > 3 {
            let present = r.get(1)? == 1;
            let active = r.get(1)? == 1;
            let (dtis, fdiffs, chains) = (r.get(1)? == 1, r.get(1)? == 1, r.get(1)? == 1);
            let mut e = ExtendedFields::default();
            if present {
                e.structure = Some(FrameDependencyStructure::read(&mut r)?);
            }
            let s = e.structure.as_ref().or(known);
            let need = |field| WireError::invalid(WHAT, field, "needs a template structure, none is known");
            if active {
                let dt = s.ok_or_else(|| need("active_decode_targets"))?.decode_targets;
                e.active_decode_targets = Some(r.get(u32::from(dt))? as u32);
            }
            if let Some(s) = s {
                has_template(s, d.template_id)?;
            }
            if dtis {
                let dt = s.ok_or_else(|| need("custom_dtis"))?.decode_targets;
                e.custom_dtis = Some((0..dt).map(|_| r.get(2).map(|v| v as u8)).collect::<Result<_, _>>()?);
            }
            if fdiffs {
                let mut v = Vec::new();
                loop {
                    let size = r.get(2)? as u32;
                    if size == 0 {
                        break;
                    }
                    v.push(r.get(4 * size)? as u16 + 1);
                }
                e.custom_fdiffs = Some(v);
            }
            if chains {
                let n = s.ok_or_else(|| need("custom_chains"))?.chains;
                e.custom_chains = Some((0..n).map(|_| r.get(8).map(|v| v as u8)).collect::<Result<_, _>>()?);
            }
            d.extended = Some(e);
        } else if let Some(s) = known {
            has_template(s, d.template_id)?;
        }
        Ok(d)
    }

    /// What `check` asks, and that it reads back against `known` (or the
    /// attached structure): a template id the structure has, and the active
    /// decode targets, custom DTIs and custom chains only with a structure.
    pub fn check_with(&self, known: Option<&FrameDependencyStructure>) -> Result<(), WireError> {
        self.check()?;
        let e = self.extended.as_ref();
        let Some(s) = e.and_then(|e| e.structure.as_ref()).or(known) else {
            if e.is_some_and(|e| {
                e.active_decode_targets.is_some() || e.custom_dtis.is_some() || e.custom_chains.is_some()
            }) {
                return Err(WireError::invalid(WHAT, "custom fields", "need a template structure to be read back"));
            }
            return Ok(());
        };
        has_template(s, self.template_id)?;
        e.map_or(Ok(()), |e| fields_fit(e, s))
    }

    /// The ranges `encode` needs: a 6-bit template id; an attached structure
    /// that is well formed; custom fields of the structure's sizes.
    pub fn check(&self) -> Result<(), WireError> {
        if self.template_id > 0x3f {
            return Err(WireError::invalid(WHAT, "template_id", format!("{} does not fit 6 bits", self.template_id)));
        }
        let Some(e) = &self.extended else { return Ok(()) };
        if let Some(s) = &e.structure {
            s.check()?;
        }
        if e.custom_dtis.as_ref().is_some_and(|d| d.iter().any(|&v| v > 3)) {
            return Err(WireError::invalid(WHAT, "custom_dtis", "a DTI does not fit 2 bits"));
        }
        if e.custom_fdiffs.as_ref().is_some_and(|f| f.iter().any(|&v| !(1..=4096).contains(&v))) {
            return Err(WireError::invalid(WHAT, "custom_fdiffs", "an fdiff outside 1..=4096"));
        }
        e.structure.as_ref().map_or(Ok(()), |s| fields_fit(e, s))
    }

    /// `known`: the structure the receiver already has, for the active
    /// decode targets' width when none is attached.
    fn write(&self, w: &mut BitWriter, known: Option<&FrameDependencyStructure>) {
        w.put(u64::from(self.start_of_frame), 1);
        w.put(u64::from(self.end_of_frame), 1);
        w.put(u64::from(self.template_id & 0x3f), 6);
        w.put(u64::from(self.frame_number), 16);
        let Some(e) = &self.extended else { return };
        w.put(u64::from(e.structure.is_some()), 1);
        w.put(u64::from(e.active_decode_targets.is_some()), 1);
        w.put(u64::from(e.custom_dtis.is_some()), 1);
        w.put(u64::from(e.custom_fdiffs.is_some()), 1);
        w.put(u64::from(e.custom_chains.is_some()), 1);
        if let Some(s) = &e.structure {
            s.write(w);
        }
        if let Some(a) = e.active_decode_targets {
            let dt = e.structure.as_ref().or(known).map_or(0, |s| u32::from(s.decode_targets).min(32));
            w.put(u64::from(a), dt);
        }
        for &d in e.custom_dtis.iter().flatten() {
            w.put(u64::from(d & 3), 2);
        }
        if let Some(f) = &e.custom_fdiffs {
            for &v in f {
                let v = u64::from(v.clamp(1, 4096) - 1);
                let size = if v < 16 {
                    1
                } else if v < 256 {
                    2
                } else {
                    3
                };
                w.put(size, 2);
                w.put(v, 4 * size as u32);
            }
            w.put(0, 2);
        }
        for &c in e.custom_chains.iter().flatten() {
            w.put(u64::from(c), 8);
        }
    }

    /// Whole bytes, and at least 4 when the extended fields are present
    /// (A.8.2 reads them whenever the element is longer than 3 bytes).
    pub fn wire_size_with(&self, known: Option<&FrameDependencyStructure>) -> usize {
        let mut w = BitWriter::default();
        self.write(&mut w, known);
        let n = w.bits.div_ceil(8);
        if self.extended.is_some() {
            n.max(4)
        } else {
            n
        }
    }

    /// The bytes, with the active decode targets as wide as `known` says
    /// when no structure is attached.
    pub fn to_bytes_with(&self, known: Option<&FrameDependencyStructure>) -> Vec<u8> {
        let mut w = BitWriter::default();
        self.write(&mut w, known);
        w.bytes.resize(self.wire_size_with(known), 0);
        w.bytes
    }
}

impl Wire for DependencyDescriptor {
    fn wire_size(&self) -> usize {
        self.wire_size_with(None)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes_with(None));
    }
    /// Without a known structure: custom DTIs and chains, and the active
    /// decode targets without an attached structure, do not parse.
    fn decode(buf: &[u8]) -> Result<Self, WireError> {
        DependencyDescriptor::decode_with(buf, None)
    }
}

/// A.8.2 f(n): most significant bit first.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    bits: usize,
}

impl BitWriter {
    fn put(&mut self, v: u64, n: u32) {
        for i in (0..n.min(64)).rev() {
            if self.bits % 8 == 0 {
                self.bytes.push(0);
            }
            if (v >> i) & 1 == 1 {
                *self.bytes.last_mut().expect("pushed above") |= 0x80 >> (self.bits % 8);
            }
            self.bits += 1;
        }
    }

    /// A.8.2 ns(n): values below m = 2^w - n in w - 1 bits, the rest in w.
    fn put_ns(&mut self, v: u32, n: u32) {
        let w = 32 - n.leading_zeros();
        let m = (1u32 << w) - n;
        if v < m {
            self.put(u64::from(v), w - 1);
        } else {
            let v = v + m;
            self.put(u64::from(v >> 1), w - 1);
            self.put(u64::from(v & 1), 1);
        }
    }
}

struct BitReader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> BitReader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        BitReader { buf, at: 0 }
    }

    fn get(&mut self, n: u32) -> Result<u64, WireError> {
        let end = self.at + n as usize;
        if end > self.buf.len() * 8 {
            return Err(WireError::Truncated { what: WHAT, need: end.div_ceil(8), have: self.buf.len() });
        }
        let mut v = 0u64;
        for _ in 0..n {
            v = v << 1 | u64::from(self.buf[self.at / 8] >> (7 - self.at % 8) & 1);
            self.at += 1;
        }
        Ok(v)
    }

    fn get_ns(&mut self, n: u32) -> Result<u32, WireError> {
        let w = 32 - n.leading_zeros();
        let m = (1u32 << w) - n;
        let v = self.get(w.saturating_sub(1))? as u32;
        if v < m {
            return Ok(v);
        }
        Ok((v << 1) - m + self.get(1)? as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(d: &DependencyDescriptor, known: Option<&FrameDependencyStructure>) {
        d.check().unwrap();
        let bytes = d.to_bytes_with(known);
        assert_eq!(bytes.len(), d.wire_size_with(known));
        assert_eq!(&DependencyDescriptor::decode_with(&bytes, known).unwrap(), d);
    }

    #[test]
    fn mandatory_fields_are_three_bytes() {
        let d =
            DependencyDescriptor { start_of_frame: true, template_id: 1, frame_number: 0xbeef, ..Default::default() };
        // S=1 E=0 template 000001, then the frame number big-endian.
        assert_eq!(d.to_bytes(), vec![0x81, 0xbe, 0xef]);
        round_trip(&d, None);
    }

    #[test]
    fn the_single_layer_structure_round_trips_and_names_its_templates() {
        let s = FrameDependencyStructure::single_layer();
        s.check().unwrap();
        let d = DependencyDescriptor {
            start_of_frame: true,
            end_of_frame: true,
            template_id: 0,
            frame_number: 7,
            extended: Some(ExtendedFields { structure: Some(s.clone()), ..Default::default() }),
        };
        round_trip(&d, None);
        // 24 mandatory + 5 flags + 6 + 5 + 2·2 layers + 2·2 DTIs + 1 + 6
        // fdiffs + 1 chain count + 1 resolutions flag = 57 bits.
        assert_eq!(d.wire_size(), 8);
        assert!(s.template(0).unwrap().fdiffs.is_empty());
        assert_eq!(s.template(1).unwrap().fdiffs, vec![1]);
        assert!(s.template(2).is_none());
        // A delta packet against the known structure; a template it lacks is refused.
        let delta = DependencyDescriptor { template_id: 1, frame_number: 8, ..Default::default() };
        round_trip(&delta, Some(&s));
        let bad = DependencyDescriptor { template_id: 5, ..Default::default() }.to_bytes();
        assert!(DependencyDescriptor::decode_with(&bad, Some(&s)).is_err());
    }

    #[test]
    fn a_layered_structure_with_chains_resolutions_and_custom_fields_round_trips() {
        let t = |spatial_id, temporal_id, fdiffs: Vec<u8>| FrameTemplate {
            spatial_id,
            temporal_id,
            dtis: vec![dti::SWITCH, dti::REQUIRED, dti::DISCARDABLE],
            fdiffs,
            chain_fdiffs: vec![1, 15],
        };
        let s = FrameDependencyStructure {
            template_id_offset: 60,
            decode_targets: 3,
            templates: vec![t(0, 0, vec![]), t(0, 1, vec![1]), t(0, 1, vec![2, 16]), t(1, 0, vec![1])],
            chains: 2,
            protected_by: vec![0, 1, 1],
            resolutions: Some(vec![(320, 180), (640, 360)]),
        };
        let full = DependencyDescriptor {
            start_of_frame: true,
            end_of_frame: false,
            template_id: 61,
            frame_number: 65_535,
            extended: Some(ExtendedFields {
                structure: Some(s.clone()),
                active_decode_targets: Some(0b101),
                custom_dtis: Some(vec![3, 0, 1]),
                custom_fdiffs: Some(vec![1, 17, 300, 4096]),
                custom_chains: Some(vec![0, 255]),
            }),
        };
        round_trip(&full, None);
        // The same custom fields without the structure attached read against
        // the known one, and do not parse without it.
        let bare = DependencyDescriptor {
            extended: Some(ExtendedFields { structure: None, ..full.extended.clone().unwrap() }),
            ..full.clone()
        };
        round_trip(&bare, Some(&s));
        assert!(DependencyDescriptor::decode(&bare.to_bytes_with(Some(&s))).is_err());
        // Templates out of layer order have no encoding.
        let mut bad = s.clone();
        bad.templates.swap(1, 3);
        assert!(bad.check().is_err());
    }

    #[test]
    fn non_symmetric_numbers_match_the_specification() {
        // ns(5): 0, 1, 2 in two bits; 3 and 4 in three (A.8.2).
        for (v, bits) in [(0, "00"), (1, "01"), (2, "10"), (3, "110"), (4, "111")] {
            let mut w = BitWriter::default();
            w.put_ns(v, 5);
            let got: String =
                (0..w.bits).map(|i| if w.bytes[i / 8] & (0x80 >> (i % 8)) != 0 { '1' } else { '0' }).collect();
            assert_eq!(got, bits, "ns(5) of {v}");
        }
    }

    #[test]
    fn unchecked_values_encode_without_panic() {
        let mut s = FrameDependencyStructure::single_layer();
        s.resolutions = Some(vec![(0, 0)]);
        s.decode_targets = 200;
        assert!(s.check().is_err());
        let d = DependencyDescriptor {
            extended: Some(ExtendedFields { structure: Some(s), active_decode_targets: Some(1), ..Default::default() }),
            ..Default::default()
        };
        assert!(!d.to_bytes().is_empty());
    }

    #[test]
    fn non_symmetric_numbers_read_back() {
        for n in 1..=33u32 {
            for v in 0..n {
                let mut w = BitWriter::default();
                w.put_ns(v, n);
                w.put(0, 8);
                assert_eq!(BitReader::new(&w.bytes).get_ns(n).unwrap(), v, "ns({n}) of {v}");
            }
        }
    }
}

//! Slice QP of an H.264 Annex B access unit, read from the bitstream the way
//! libwebrtc's `H264BitstreamParser::GetLastSliceQp` does (OpenH264 does not
//! report it: its `uiAverageFrameQP` statistic stays 0).
//!
//! Only the syntax in front of `slice_qp_delta` is parsed; SPS/PPS fields it
//! depends on are remembered across calls (P frames carry no parameter sets).
//! Anything unsupported (slice groups, weighted prediction, malformed data)
//! gives `None`.

#![cfg_attr(not(rtcc_h264), allow(dead_code))]

use std::collections::HashMap;

use rtcc_wire::payload::h264::split_annexb;

#[derive(Clone, Copy, Debug)]
struct Sps {
    separate_colour_plane: bool,
    log2_max_frame_num: u32,
    poc_type: u32,
    log2_max_poc_lsb: u32,
    delta_pic_order_always_zero: bool,
    frame_mbs_only: bool,
}

#[derive(Clone, Copy, Debug)]
struct Pps {
    sps_id: u32,
    cabac: bool,
    bottom_field_pic_order_in_frame_present: bool,
    weighted_pred: bool,
    weighted_bipred_idc: u32,
    pic_init_qp: i32,
    redundant_pic_cnt_present: bool,
}

/// Remembers parameter sets and returns the QP of the last slice.
#[derive(Default, Debug)]
pub struct SliceQpParser {
    sps: HashMap<u32, Sps>,
    pps: HashMap<u32, Pps>,
}

impl SliceQpParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses every NAL unit of `annexb`; returns the QP (0..=51) of the last
    /// slice whose header could be read.
    pub fn parse(&mut self, annexb: &[u8]) -> Option<i32> {
        let mut qp = None;
        for nal in split_annexb(annexb) {
            let header = nal[0];
            let nal_ref_idc = (header >> 5) & 3;
            let nal_type = header & 0x1f;
            let rbsp = unescape(&nal[1..]);
            let mut r = BitReader::new(&rbsp);
            match nal_type {
                7 => {
                    if let Some((id, sps)) = parse_sps(&mut r) {
                        self.sps.insert(id, sps);
                    }
                }
                8 => {
                    if let Some((id, pps)) = parse_pps(&mut r) {
                        self.pps.insert(id, pps);
                    }
                }
                1 | 5 => {
                    if let Some(q) = self.slice_qp(&mut r, nal_type == 5, nal_ref_idc) {
                        qp = Some(q);
                    }
                }
                _ => {}
            }
        }
        qp
    }

    fn slice_qp(&self, r: &mut BitReader, idr: bool, nal_ref_idc: u8) -> Option<i32> {
        let _first_mb = r.ue()?;
        let slice_type = r.ue()? % 5; // 0 P, 1 B, 2 I, 3 SP, 4 SI
        let pps = self.pps.get(&r.ue()?)?;
        let sps = self.sps.get(&pps.sps_id)?;
        let (is_p, is_b, is_sp) = (slice_type == 0, slice_type == 1, slice_type == 3);
        if sps.separate_colour_plane {
            r.bits(2)?;
        }
        r.bits(sps.log2_max_frame_num)?; // frame_num
        let mut field_pic = false;
        if !sps.frame_mbs_only {
            field_pic = r.flag()?;
            if field_pic {
                r.flag()?; // bottom_field_flag
            }
        }
        if idr {
            r.ue()?; // idr_pic_id
        }
        if sps.poc_type == 0 {
            r.bits(sps.log2_max_poc_lsb)?;
            if pps.bottom_field_pic_order_in_frame_present && !field_pic {
                r.se()?;
            }
        }
        if sps.poc_type == 1 && !sps.delta_pic_order_always_zero {
            r.se()?;
            if pps.bottom_field_pic_order_in_frame_present && !field_pic {
                r.se()?;
            }
        }
        if pps.redundant_pic_cnt_present {
            r.ue()?;
        }
        if is_b {
            r.flag()?; // direct_spatial_mv_pred_flag
        }
        // num_ref_idx_active_override_flag
        if (is_p || is_sp || is_b) && r.flag()? {
            r.ue()?;
            if is_b {
                r.ue()?;
            }
        }
        // ref_pic_list_modification()
        if slice_type != 2 && slice_type != 4 {
            skip_ref_pic_list_modification(r)?;
            if is_b {
                skip_ref_pic_list_modification(r)?;
            }
        }
        if (pps.weighted_pred && (is_p || is_sp)) || (pps.weighted_bipred_idc == 1 && is_b) {
            return None; // pred_weight_table: not produced by OpenH264
        }
        if nal_ref_idc != 0 {
            // dec_ref_pic_marking()
            if idr {
                r.flag()?;
                r.flag()?;
            } else if r.flag()? {
                loop {
                    let op = r.ue()?;
                    match op {
                        0 => break,
                        1 | 3 => {
                            r.ue()?;
                            if op == 3 {
                                r.ue()?;
                            }
                        }
                        2 | 6 => {
                            r.ue()?;
                        }
                        4 => {
                            r.ue()?;
                        }
                        5 => {}
                        _ => return None,
                    }
                }
            }
        }
        if pps.cabac && slice_type != 2 && slice_type != 4 {
            r.ue()?; // cabac_init_idc
        }
        let qp = pps.pic_init_qp + r.se()?;
        (0..=51).contains(&qp).then_some(qp)
    }
}

fn skip_ref_pic_list_modification(r: &mut BitReader) -> Option<()> {
    if r.flag()? {
        for _ in 0..64 {
            match r.ue()? {
                3 => return Some(()),
                0..=2 => {
                    r.ue()?;
                }
                _ => return None,
            }
        }
        return None;
    }
    Some(())
}

fn parse_sps(r: &mut BitReader) -> Option<(u32, Sps)> {
    let profile_idc = r.bits(8)?;
    r.bits(16)?; // constraint flags, level_idc
    let id = r.ue()?;
    let mut separate_colour_plane = false;
    if matches!(profile_idc, 100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135) {
        let chroma_format_idc = r.ue()?;
        if chroma_format_idc == 3 {
            separate_colour_plane = r.flag()?;
        }
        r.ue()?; // bit_depth_luma_minus8
        r.ue()?; // bit_depth_chroma_minus8
        r.flag()?; // qpprime_y_zero_transform_bypass_flag
        if r.flag()? {
            // seq_scaling_matrix_present_flag
            let lists = if chroma_format_idc == 3 { 12 } else { 8 };
            for i in 0..lists {
                if r.flag()? {
                    skip_scaling_list(r, if i < 6 { 16 } else { 64 })?;
                }
            }
        }
    }
    let log2_max_frame_num = r.ue()? + 4;
    let poc_type = r.ue()?;
    let (mut log2_max_poc_lsb, mut delta_pic_order_always_zero) = (0, false);
    match poc_type {
        0 => log2_max_poc_lsb = r.ue()? + 4,
        1 => {
            delta_pic_order_always_zero = r.flag()?;
            r.se()?;
            r.se()?;
            let cycle = r.ue()?;
            if cycle > 255 {
                return None;
            }
            for _ in 0..cycle {
                r.se()?;
            }
        }
        2 => {}
        _ => return None,
    }
    r.ue()?; // max_num_ref_frames
    r.flag()?; // gaps_in_frame_num_value_allowed_flag
    r.ue()?; // pic_width_in_mbs_minus1
    r.ue()?; // pic_height_in_map_units_minus1
    let frame_mbs_only = r.flag()?;
    if log2_max_frame_num > 16 || log2_max_poc_lsb > 16 || id > 31 {
        return None;
    }
    Some((
        id,
        Sps {
            separate_colour_plane,
            log2_max_frame_num,
            poc_type,
            log2_max_poc_lsb,
            delta_pic_order_always_zero,
            frame_mbs_only,
        },
    ))
}

fn skip_scaling_list(r: &mut BitReader, size: usize) -> Option<()> {
    let (mut last, mut next) = (8i32, 8i32);
    for _ in 0..size {
        if next != 0 {
            next = (last + r.se()? + 256).rem_euclid(256);
        }
        last = if next == 0 { last } else { next };
    }
    Some(())
}

fn parse_pps(r: &mut BitReader) -> Option<(u32, Pps)> {
    let id = r.ue()?;
    let sps_id = r.ue()?;
    let cabac = r.flag()?;
    let bottom_field_pic_order_in_frame_present = r.flag()?;
    if r.ue()? != 0 {
        return None; // slice groups (FMO): not used by OpenH264 in this setup
    }
    r.ue()?; // num_ref_idx_l0_default_active_minus1
    r.ue()?; // num_ref_idx_l1_default_active_minus1
    let weighted_pred = r.flag()?;
    let weighted_bipred_idc = r.bits(2)?;
    let pic_init_qp = 26 + r.se()?;
    r.se()?; // pic_init_qs_minus26
    r.se()?; // chroma_qp_index_offset
    r.flag()?; // deblocking_filter_control_present_flag
    r.flag()?; // constrained_intra_pred_flag
    let redundant_pic_cnt_present = r.flag()?;
    if id > 255 || sps_id > 31 {
        return None;
    }
    Some((
        id,
        Pps {
            sps_id,
            cabac,
            bottom_field_pic_order_in_frame_present,
            weighted_pred,
            weighted_bipred_idc,
            pic_init_qp,
            redundant_pic_cnt_present,
        },
    ))
}

/// Removes emulation prevention bytes (00 00 03 -> 00 00).
fn unescape(nal: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(nal.len());
    let mut zeros = 0;
    for &b in nal {
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    out
}

struct BitReader<'a> {
    data: &'a [u8],
    pos: usize, // in bits
}

impl<'a> BitReader<'a> {
    fn new(data: &'a [u8]) -> Self {
        BitReader { data, pos: 0 }
    }

    fn bit(&mut self) -> Option<u32> {
        let byte = *self.data.get(self.pos / 8)?;
        let b = (byte >> (7 - self.pos % 8)) & 1;
        self.pos += 1;
        Some(u32::from(b))
    }

    fn flag(&mut self) -> Option<bool> {
        Some(self.bit()? == 1)
    }

    fn bits(&mut self, n: u32) -> Option<u32> {
        if n > 32 {
            return None;
        }
        let mut v = 0u32;
        for _ in 0..n {
            v = (v << 1) | self.bit()?;
        }
        Some(v)
    }

    /// Unsigned Exp-Golomb.
    fn ue(&mut self) -> Option<u32> {
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros > 31 {
                return None;
            }
        }
        let rest = self.bits(zeros)?;
        ((1u64 << zeros) - 1 + u64::from(rest)).try_into().ok()
    }

    /// Signed Exp-Golomb.
    fn se(&mut self) -> Option<i32> {
        let k = i64::from(self.ue()?);
        let v = if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) };
        i32::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exp-Golomb bit writer for hand-made streams.
    #[derive(Default)]
    struct W {
        bits: Vec<u8>,
    }

    impl W {
        fn u(&mut self, n: u32, v: u32) -> &mut Self {
            for i in (0..n).rev() {
                self.bits.push(((v >> i) & 1) as u8);
            }
            self
        }
        fn ue(&mut self, v: u32) -> &mut Self {
            let x = v + 1;
            let len = 32 - x.leading_zeros();
            self.u(len - 1, 0).u(len, x)
        }
        fn se(&mut self, v: i32) -> &mut Self {
            self.ue(if v > 0 { 2 * v as u32 - 1 } else { (-2 * v) as u32 })
        }
        /// RBSP with stop bit, escaped, behind a start code and NAL header.
        fn nal(&mut self, header: u8) -> Vec<u8> {
            self.bits.push(1);
            while !self.bits.len().is_multiple_of(8) {
                self.bits.push(0);
            }
            let bytes: Vec<u8> = self.bits.chunks(8).map(|c| c.iter().fold(0, |a, &b| (a << 1) | b)).collect();
            let mut out = vec![0, 0, 0, 1, header];
            let mut zeros = 0;
            for b in bytes {
                if zeros >= 2 && b <= 3 {
                    out.push(3);
                    zeros = 0;
                }
                zeros = if b == 0 { zeros + 1 } else { 0 };
                out.push(b);
            }
            out
        }
    }

    fn sps() -> Vec<u8> {
        let mut w = W::default();
        w.u(8, 66).u(8, 0xc0).u(8, 30).ue(0); // baseline, level 3.0, id 0
        w.ue(0).ue(0).ue(2); // log2_max_frame_num 4, poc type 0, log2_max_poc_lsb 6
        w.ue(1).u(1, 0).ue(39).ue(22).u(1, 1).u(1, 1).u(1, 0).u(1, 0);
        w.nal(0x67)
    }

    fn pps(init_qp_minus26: i32) -> Vec<u8> {
        let mut w = W::default();
        w.ue(0).ue(0).u(1, 0).u(1, 0).ue(0).ue(0).ue(0).u(1, 0).u(2, 0);
        w.se(init_qp_minus26).se(0).se(0).u(1, 1).u(1, 0).u(1, 0);
        w.nal(0x68)
    }

    fn idr_slice(qp_delta: i32) -> Vec<u8> {
        let mut w = W::default();
        w.ue(0).ue(7).ue(0).u(4, 0).ue(0).u(6, 0); // I slice, frame_num, idr_pic_id, poc lsb
        w.u(1, 0).u(1, 0); // dec_ref_pic_marking (IDR)
        w.se(qp_delta).ue(0).u(8, 0xff);
        w.nal(0x65)
    }

    fn p_slice(frame_num: u32, qp_delta: i32) -> Vec<u8> {
        let mut w = W::default();
        w.ue(0).ue(5).ue(0).u(4, frame_num).u(6, 2 * frame_num); // P slice
        w.u(1, 1).ue(0); // num_ref_idx override, l0 = 1
        w.u(1, 1).ue(0).ue(0).ue(3); // ref_pic_list_modification: one entry then end
        w.u(1, 1).ue(1).ue(0).ue(0); // adaptive marking: mmco 1, end
        w.se(qp_delta).ue(0).u(8, 0);
        w.nal(0x41)
    }

    #[test]
    fn reads_slice_qp_of_hand_made_stream() {
        let mut p = SliceQpParser::new();
        let au: Vec<u8> = [sps(), pps(4), idr_slice(-7)].concat();
        assert_eq!(p.parse(&au), Some(23));
        // P frames carry no parameter sets; the parser remembers them.
        assert_eq!(p.parse(&p_slice(1, 10)), Some(40));
        assert_eq!(p.parse(&p_slice(2, -30)), Some(0));
        // A slice before its PPS, garbage, and truncation: unknown, no panic.
        assert_eq!(SliceQpParser::new().parse(&p_slice(1, 0)), None);
        assert_eq!(p.parse(&[0, 0, 1, 0x65, 0xff]), None);
        let slice = idr_slice(-7);
        assert_eq!(p.parse(&slice[..7]), None);
        assert_eq!(p.parse(&[]), None);
        // Start codes with nothing between them: no unit, no panic.
        assert_eq!(p.parse(&[0, 0, 1, 0, 0, 0, 1, 0, 0, 1]), None);
        assert_eq!(p.parse(&[&[0, 0, 0, 1][..], &idr_slice(-7)].concat()), Some(23));
    }

    #[test]
    fn exp_golomb_and_unescaping() {
        let mut w = W::default();
        for v in [0, 1, 2, 3, 7, 8, 254, 255, 1000] {
            w.ue(v);
        }
        for v in [0, 1, -1, 2, -2, 100, -100] {
            w.se(v);
        }
        let nal = w.nal(0x06);
        let units = split_annexb(&nal);
        assert_eq!(units.len(), 1);
        let rbsp = unescape(&units[0][1..]);
        let mut r = BitReader::new(&rbsp);
        for v in [0, 1, 2, 3, 7, 8, 254, 255, 1000] {
            assert_eq!(r.ue(), Some(v));
        }
        for v in [0, 1, -1, 2, -2, 100, -100] {
            assert_eq!(r.se(), Some(v));
        }
        assert_eq!(unescape(&[0, 0, 3, 1, 0, 0, 3, 0]), vec![0, 0, 1, 0, 0, 0]);
    }
}

//! Real video for rtcc: I420 pictures, content sources (generated from
//! photographs, or read from Y4M/YUV files), VP8 (libvpx) and H.264
//! (OpenH264) encoders and decoders driven the way WebRTC drives them, and
//! PSNR/SSIM. The simulator uses it when a flow's encoder is `vp8` or `h264`.

pub mod calibrate;
pub mod codec;
pub mod content;
pub mod picture;
pub mod quality;
pub mod real;
pub mod y4m;

pub use picture::Picture;

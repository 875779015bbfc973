/*
 * rtcc codec shim: a thin C layer over libvpx's VP8 API and OpenH264's C API,
 * so the Rust side never has to mirror the libraries' struct layouts.
 *
 * Every function takes plain scalars and tightly packed I420 planes; every
 * failure returns NULL / a negative value and writes a message into the
 * caller's `err` buffer (always NUL-terminated).
 *
 * Encoder configuration follows libwebrtc:
 *   VP8:    modules/video_coding/codecs/vp8/libvpx_vp8_encoder.cc
 *   H.264:  modules/video_coding/codecs/h264/h264_encoder_impl.cc
 * Only the parts whose library build.rs found are compiled
 * (RTCC_HAVE_VPX, RTCC_HAVE_OPENH264).
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(RTCC_HAVE_VPX) || defined(RTCC_HAVE_OPENH264)

static void rtcc_set_err(char *err, size_t err_len, const char *fmt, ...) {
  va_list ap;
  if (!err || err_len == 0) return;
  va_start(ap, fmt);
  vsnprintf(err, err_len, fmt, ap);
  va_end(ap);
  err[err_len - 1] = '\0';
}

/* Grows *buf to hold at least `need` bytes. Returns 0 on success. */
static int rtcc_reserve(uint8_t **buf, size_t *cap, size_t need) {
  uint8_t *p;
  size_t n;
  if (need <= *cap) return 0;
  n = *cap ? *cap : 4096;
  while (n < need) n *= 2;
  p = (uint8_t *)realloc(*buf, n);
  if (!p) return -1;
  *buf = p;
  *cap = n;
  return 0;
}

/* Copies a w x h plane between buffers of different strides, row by row. */
static void rtcc_copy_plane(uint8_t *dst, int dst_stride, const uint8_t *src, int src_stride, int w, int h) {
  int row;
  for (row = 0; row < h; ++row) memcpy(dst + (size_t)row * dst_stride, src + (size_t)row * src_stride, (size_t)w);
}

#endif /* RTCC_HAVE_VPX || RTCC_HAVE_OPENH264 */

/* ======================================================================= */
/* VP8 (libvpx)                                                            */
/* ======================================================================= */
#ifdef RTCC_HAVE_VPX

#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vpx_encoder.h>

/* libwebrtc: kRtpTicksPerSecond; g_timebase is 1/90000. */
#define RTCC_RTP_TICKS_PER_SECOND 90000

typedef struct rtcc_vp8_enc {
  vpx_codec_ctx_t ctx;
  vpx_codec_enc_cfg_t cfg;
  vpx_image_t img;
  int img_allocated;
  int inited;
  int cpu_used;
  unsigned max_framerate; /* libwebrtc codec_.maxFramerate (rounded fps) */
  unsigned init_w, init_h; /* size at the last vpx_codec_enc_init */
  int64_t pts;             /* libwebrtc timestamp_ (90 kHz ticks) */
  int force_key_next;
  uint8_t *out;
  size_t out_cap;
} rtcc_vp8_enc;

static void rtcc_vpx_err(char *err, size_t err_len, const char *what, vpx_codec_ctx_t *ctx, vpx_codec_err_t res) {
  const char *detail = ctx ? vpx_codec_error_detail(ctx) : NULL;
  rtcc_set_err(err, err_len, "%s: libvpx: %s%s%s", what, vpx_codec_err_to_string(res), detail ? ": " : "",
               detail ? detail : "");
}

/* libwebrtc LibvpxVp8Encoder::MaxIntraTarget(rc_buf_optimal_sz): the key frame
 * target is capped at 0.5 * optimal buffer (ms) * fps / 10 percent of the
 * per-frame bandwidth, but never below 300 %. */
static unsigned rtcc_vp8_max_intra_target(unsigned optimal_buffer_ms, unsigned max_framerate) {
  const float scale_par = 0.5f;
  unsigned target_pct = (unsigned)((float)optimal_buffer_ms * scale_par * (float)max_framerate / 10);
  const unsigned min_intra_th = 300;
  return target_pct < min_intra_th ? min_intra_th : target_pct;
}

static unsigned rtcc_round_fps(double fps) {
  /* libwebrtc SetRates: codec_.maxFramerate = framerate_fps + 0.5 (truncated). */
  unsigned r = (unsigned)(fps + 0.5);
  return r < 1 ? 1 : r;
}

/* vpx_codec_enc_init + the codec controls of
 * LibvpxVp8Encoder::InitAndSetControlSettings (single stream, camera mode). */
static int rtcc_vp8_enc_init_ctx(rtcc_vp8_enc *e, char *err, size_t err_len) {
  vpx_codec_err_t res;
  /* libwebrtc passes VPX_CODEC_USE_OUTPUT_PARTITION to get token partitions as
   * separate packets for RTP; the concatenated bitstream is the same, and we
   * return whole frames, so no flag is needed. */
  res = vpx_codec_enc_init(&e->ctx, vpx_codec_vp8_cx(), &e->cfg, 0);
  if (res != VPX_CODEC_OK) {
    rtcc_vpx_err(err, err_len, "encoder init", &e->ctx, res);
    return -1;
  }
  e->inited = 1;
  e->init_w = e->cfg.g_w;
  e->init_h = e->cfg.g_h;
#define RTCC_VP8_CTRL(id, val)                                       \
  do {                                                               \
    res = vpx_codec_control(&e->ctx, id, val);                       \
    if (res != VPX_CODEC_OK) {                                       \
      rtcc_vpx_err(err, err_len, "control " #id, &e->ctx, res); \
      return -1;                                                     \
    }                                                                \
  } while (0)
  /* Denoiser off (the rtcc brief; libwebrtc enables it when
   * VideoCodecVP8::denoisingOn, which is up to the application). */
  RTCC_VP8_CTRL(VP8E_SET_NOISE_SENSITIVITY, 0u);
  /* "Allow more screen content to be detected as static": 1 for camera. */
  RTCC_VP8_CTRL(VP8E_SET_STATIC_THRESHOLD, 1u);
  RTCC_VP8_CTRL(VP8E_SET_CPUUSED, e->cpu_used);
  /* kTokenPartitions = VP8_ONE_TOKENPARTITION. */
  RTCC_VP8_CTRL(VP8E_SET_TOKEN_PARTITIONS, (int)VP8_ONE_TOKENPARTITION);
  RTCC_VP8_CTRL(VP8E_SET_MAX_INTRA_BITRATE_PCT, rtcc_vp8_max_intra_target(e->cfg.rc_buf_optimal_sz, e->max_framerate));
  /* 0 = camera content (2 is screenshare). */
  RTCC_VP8_CTRL(VP8E_SET_SCREEN_CONTENT_MODE, 0u);
#undef RTCC_VP8_CTRL
  return 0;
}

static int rtcc_vp8_enc_alloc_img(rtcc_vp8_enc *e, char *err, size_t err_len) {
  if (e->img_allocated) {
    vpx_img_free(&e->img);
    e->img_allocated = 0;
  }
  /* 32-byte alignment as libwebrtc uses for its scaled images: strides are
   * wider than the picture, hence the row-by-row copy in encode. */
  if (!vpx_img_alloc(&e->img, VPX_IMG_FMT_I420, e->cfg.g_w, e->cfg.g_h, 32)) {
    rtcc_set_err(err, err_len, "encoder: vpx_img_alloc(%ux%u) failed", e->cfg.g_w, e->cfg.g_h);
    return -1;
  }
  e->img_allocated = 1;
  return 0;
}

void rtcc_vp8_enc_free(rtcc_vp8_enc *e) {
  if (!e) return;
  if (e->inited) vpx_codec_destroy(&e->ctx);
  if (e->img_allocated) vpx_img_free(&e->img);
  free(e->out);
  free(e);
}

rtcc_vp8_enc *rtcc_vp8_enc_new(int width, int height, double fps, unsigned target_kbps, int cpu_used,
                               unsigned kf_max_dist, int frame_dropping, int threads, char *err, size_t err_len) {
  vpx_codec_err_t res;
  rtcc_vp8_enc *e = (rtcc_vp8_enc *)calloc(1, sizeof(*e));
  if (!e) {
    rtcc_set_err(err, err_len, "encoder: out of memory");
    return NULL;
  }
  res = vpx_codec_enc_config_default(vpx_codec_vp8_cx(), &e->cfg, 0);
  if (res != VPX_CODEC_OK) {
    rtcc_vpx_err(err, err_len, "vpx_codec_enc_config_default", NULL, res);
    free(e);
    return NULL;
  }
  e->cpu_used = cpu_used;
  e->max_framerate = rtcc_round_fps(fps);

  /* LibvpxVp8Encoder::InitEncode, one stream, one temporal layer. */
  e->cfg.g_timebase.num = 1;
  e->cfg.g_timebase.den = RTCC_RTP_TICKS_PER_SECOND;
  e->cfg.g_lag_in_frames = 0; /* no frame lagging */
  /* Error resilience only with >1 temporal layers; one layer -> 0. */
  e->cfg.g_error_resilient = 0;
  /* FrameDropThreshold(): 30 when frame dropping is on, else 0. */
  e->cfg.rc_dropframe_thresh = frame_dropping ? 30 : 0;
  e->cfg.rc_end_usage = VPX_CBR;
  e->cfg.g_pass = VPX_RC_ONE_PASS;
  e->cfg.rc_resize_allowed = 0; /* resizing is handled outside libvpx */
  e->cfg.rc_min_quantizer = 2;  /* camera (screenshare uses 12) */
  e->cfg.rc_max_quantizer = 56; /* kDefaultMaxQp / qpMax */
  e->cfg.rc_undershoot_pct = 100;
  e->cfg.rc_overshoot_pct = 15;
  e->cfg.rc_buf_initial_sz = 500;
  e->cfg.rc_buf_optimal_sz = 600;
  e->cfg.rc_buf_sz = 1000;
  if (kf_max_dist > 0) {
    e->cfg.kf_mode = VPX_KF_AUTO;
    e->cfg.kf_max_dist = kf_max_dist;
  } else {
    e->cfg.kf_mode = VPX_KF_DISABLED;
  }
  e->cfg.g_w = (unsigned)width;
  e->cfg.g_h = (unsigned)height;
  e->cfg.g_threads = (unsigned)(threads < 1 ? 1 : threads);
  e->cfg.rc_target_bitrate = target_kbps;
  /* One layer: ApplyVp8EncoderConfigToVpxConfig without a TL config. */
  e->cfg.ts_number_layers = 1;
  e->cfg.ts_rate_decimator[0] = 1;
  e->cfg.ts_periodicity = 1;
  e->cfg.ts_layer_id[0] = 0;

  if (rtcc_vp8_enc_alloc_img(e, err, err_len) != 0 || rtcc_vp8_enc_init_ctx(e, err, err_len) != 0) {
    rtcc_vp8_enc_free(e);
    return NULL;
  }
  e->pts = 0;
  return e;
}

/* LibvpxVp8Encoder::SetRates: new rc_target_bitrate (kbps) and maxFramerate,
 * applied to the running encoder with vpx_codec_enc_config_set. */
int rtcc_vp8_enc_set_rates(rtcc_vp8_enc *e, unsigned target_kbps, double fps, char *err, size_t err_len) {
  vpx_codec_enc_cfg_t cfg = e->cfg;
  vpx_codec_err_t res;
  if (!e->inited) {
    rtcc_set_err(err, err_len, "set rates: encoder is not initialised (an earlier reconfiguration failed)");
    return -1;
  }
  cfg.rc_target_bitrate = target_kbps;
  res = vpx_codec_enc_config_set(&e->ctx, &cfg);
  if (res != VPX_CODEC_OK) {
    rtcc_vpx_err(err, err_len, "set rates (vpx_codec_enc_config_set)", &e->ctx, res);
    return -1;
  }
  e->cfg = cfg;
  e->max_framerate = rtcc_round_fps(fps);
  return 0;
}

/* New resolution. libvpx accepts a g_w/g_h change through config_set when it
 * is not larger than the size the encoder was initialised with; anything
 * larger needs a fresh encoder (libwebrtc re-runs InitEncode on every
 * resolution change). Either way the next frame is a key frame. */
int rtcc_vp8_enc_set_size(rtcc_vp8_enc *e, int width, int height, char *err, size_t err_len) {
  vpx_codec_enc_cfg_t cfg = e->cfg;
  vpx_codec_err_t res;
  cfg.g_w = (unsigned)width;
  cfg.g_h = (unsigned)height;
  if (e->inited && cfg.g_w <= e->init_w && cfg.g_h <= e->init_h) {
    res = vpx_codec_enc_config_set(&e->ctx, &cfg);
    if (res != VPX_CODEC_OK) {
      rtcc_vpx_err(err, err_len, "set size (vpx_codec_enc_config_set)", &e->ctx, res);
      return -1;
    }
    e->cfg = cfg;
  } else {
    if (e->inited) vpx_codec_destroy(&e->ctx);
    e->inited = 0;
    e->cfg = cfg;
    if (rtcc_vp8_enc_init_ctx(e, err, err_len) != 0) return -1;
    e->pts = 0; /* InitEncode resets timestamp_ */
  }
  if (rtcc_vp8_enc_alloc_img(e, err, err_len) != 0) return -1;
  e->force_key_next = 1;
  return 0;
}

/* Encodes one tightly packed I420 picture of the configured size.
 * Returns 0 and sets *out_len (0 = frame dropped by rate control). */
int rtcc_vp8_enc_encode(rtcc_vp8_enc *e, const uint8_t *y, const uint8_t *u, const uint8_t *v, int width, int height,
                        int force_key, const uint8_t **out, size_t *out_len, int *is_key, int *qp, char *err,
                        size_t err_len) {
  vpx_codec_err_t res;
  vpx_enc_frame_flags_t flags = 0;
  vpx_codec_iter_t iter = NULL;
  const vpx_codec_cx_pkt_t *pkt;
  unsigned long duration;
  int cw, ch;
  size_t len = 0;
  int key = 0;

  *out = NULL;
  *out_len = 0;
  *is_key = 0;
  *qp = -1;
  if (!e->inited || !e->img_allocated) {
    rtcc_set_err(err, err_len, "encode: encoder is not initialised (an earlier reconfiguration failed)");
    return -1;
  }
  if ((unsigned)width != e->cfg.g_w || (unsigned)height != e->cfg.g_h) {
    rtcc_set_err(err, err_len, "encode: picture is %dx%d, encoder is configured for %ux%u", width, height,
                 e->cfg.g_w, e->cfg.g_h);
    return -1;
  }
  cw = (width + 1) / 2;
  ch = (height + 1) / 2;
  rtcc_copy_plane(e->img.planes[VPX_PLANE_Y], e->img.stride[VPX_PLANE_Y], y, width, width, height);
  rtcc_copy_plane(e->img.planes[VPX_PLANE_U], e->img.stride[VPX_PLANE_U], u, cw, cw, ch);
  rtcc_copy_plane(e->img.planes[VPX_PLANE_V], e->img.stride[VPX_PLANE_V], v, cw, cw, ch);

  if (force_key || e->force_key_next) flags |= VPX_EFLAG_FORCE_KF;
  /* libwebrtc: duration = kRtpTicksPerSecond / codec_.maxFramerate, deadline
   * VPX_DL_REALTIME, timestamp_ advanced by duration after every call. */
  duration = RTCC_RTP_TICKS_PER_SECOND / e->max_framerate;
  res = vpx_codec_encode(&e->ctx, &e->img, e->pts, duration, flags, VPX_DL_REALTIME);
  e->pts += (int64_t)duration;
  if (res != VPX_CODEC_OK) {
    rtcc_vpx_err(err, err_len, "encode", &e->ctx, res);
    return -1;
  }
  e->force_key_next = 0;

  while ((pkt = vpx_codec_get_cx_data(&e->ctx, &iter)) != NULL) {
    if (pkt->kind != VPX_CODEC_CX_FRAME_PKT) continue;
    if (rtcc_reserve(&e->out, &e->out_cap, len + pkt->data.frame.sz) != 0) {
      rtcc_set_err(err, err_len, "encode: out of memory");
      return -1;
    }
    memcpy(e->out + len, pkt->data.frame.buf, pkt->data.frame.sz);
    len += pkt->data.frame.sz;
    if (pkt->data.frame.flags & VPX_FRAME_IS_KEY) key = 1;
  }
  if (len > 0) {
    /* Bitstream-scale quantizer 0..127, as libwebrtc's EncodedImage::qp_. */
    int q = -1;
    if (vpx_codec_control(&e->ctx, VP8E_GET_LAST_QUANTIZER, &q) == VPX_CODEC_OK) *qp = q;
  }
  *out = e->out;
  *out_len = len;
  *is_key = key;
  return 0;
}

typedef struct rtcc_vp8_dec {
  vpx_codec_ctx_t ctx;
  vpx_image_t *last; /* owned by libvpx, valid until the next decode */
} rtcc_vp8_dec;

rtcc_vp8_dec *rtcc_vp8_dec_new(char *err, size_t err_len) {
  vpx_codec_dec_cfg_t cfg;
  vpx_codec_err_t res;
  rtcc_vp8_dec *d = (rtcc_vp8_dec *)calloc(1, sizeof(*d));
  if (!d) {
    rtcc_set_err(err, err_len, "decoder: out of memory");
    return NULL;
  }
  memset(&cfg, 0, sizeof(cfg));
  cfg.threads = 1; /* libwebrtc LibvpxVp8Decoder: constant 1 thread */
  /* No VPX_CODEC_USE_POSTPROC: libwebrtc enables MFQE/deblocking post
   * processing on desktop, driven by a wall-clock QP smoother; we return the
   * reconstructed frame (deterministic, identical to the encoder's). */
  res = vpx_codec_dec_init(&d->ctx, vpx_codec_vp8_dx(), &cfg, 0);
  if (res != VPX_CODEC_OK) {
    rtcc_vpx_err(err, err_len, "decoder init", &d->ctx, res);
    free(d);
    return NULL;
  }
  return d;
}

void rtcc_vp8_dec_free(rtcc_vp8_dec *d) {
  if (!d) return;
  vpx_codec_destroy(&d->ctx);
  free(d);
}

/* Returns 1 and the size when a picture is available, 0 when the decoder
 * output nothing, -1 on error. */
int rtcc_vp8_dec_decode(rtcc_vp8_dec *d, const uint8_t *data, size_t len, int *width, int *height, char *err,
                        size_t err_len) {
  vpx_codec_iter_t iter = NULL;
  vpx_image_t *img, *last = NULL;
  vpx_codec_err_t res;
  d->last = NULL;
  if (len > 0xffffffffu) {
    rtcc_set_err(err, err_len, "decode: %zu bytes is too large", len);
    return -1;
  }
  /* libwebrtc kDecodeDeadlineRealtime = 1. */
  res = vpx_codec_decode(&d->ctx, data, (unsigned int)len, NULL, 1);
  if (res != VPX_CODEC_OK) {
    rtcc_vpx_err(err, err_len, "decode", &d->ctx, res);
    return -1;
  }
  while ((img = vpx_codec_get_frame(&d->ctx, &iter)) != NULL) last = img;
  if (!last) return 0;
  if (last->fmt != VPX_IMG_FMT_I420) {
    rtcc_set_err(err, err_len, "decode: unexpected image format %d", (int)last->fmt);
    return -1;
  }
  d->last = last;
  *width = (int)last->d_w;
  *height = (int)last->d_h;
  return 1;
}

/* Copies the picture returned by the last successful decode into tightly
 * packed planes (y: w*h, u/v: ((w+1)/2)*((h+1)/2)). */
int rtcc_vp8_dec_copy(rtcc_vp8_dec *d, uint8_t *y, uint8_t *u, uint8_t *v) {
  const vpx_image_t *img = d->last;
  int w, h, cw, ch;
  if (!img) return -1;
  w = (int)img->d_w;
  h = (int)img->d_h;
  cw = (w + 1) / 2;
  ch = (h + 1) / 2;
  rtcc_copy_plane(y, w, img->planes[VPX_PLANE_Y], img->stride[VPX_PLANE_Y], w, h);
  rtcc_copy_plane(u, cw, img->planes[VPX_PLANE_U], img->stride[VPX_PLANE_U], cw, ch);
  rtcc_copy_plane(v, cw, img->planes[VPX_PLANE_V], img->stride[VPX_PLANE_V], cw, ch);
  return 0;
}

#endif /* RTCC_HAVE_VPX */

/* ======================================================================= */
/* H.264 (OpenH264)                                                        */
/* ======================================================================= */
#ifdef RTCC_HAVE_OPENH264

#include <wels/codec_api.h>
#include <wels/codec_app_def.h>
#include <wels/codec_def.h>

#define RTCC_LOG_LEN 512

/* OpenH264 reports failures as bare integers and explains them in its log;
 * the shim routes the log to this callback, which keeps the last error or
 * warning line so it can be put in the returned error (and keeps the
 * library from writing to stderr). */
typedef struct rtcc_wels_log {
  char last[RTCC_LOG_LEN];
} rtcc_wels_log;

static void rtcc_wels_trace(void *ctx, int level, const char *msg) {
  rtcc_wels_log *log = (rtcc_wels_log *)ctx;
  size_t n;
  const char *p;
  if (!log || !msg || level > WELS_LOG_WARNING) return;
  /* Drop the "[OpenH264] this = 0x..., " prefix (it holds a pointer). */
  p = strstr(msg, "this = ");
  if (p) p = strstr(p, ", ");
  msg = p ? p + 2 : msg;
  snprintf(log->last, sizeof(log->last), "%s", msg);
  n = strlen(log->last);
  while (n > 0 && (log->last[n - 1] == '\n' || log->last[n - 1] == '\r')) log->last[--n] = '\0';
}

static void rtcc_h264_err(char *err, size_t err_len, const char *what, long code, const rtcc_wels_log *log) {
  if (log && log->last[0])
    rtcc_set_err(err, err_len, "%s: OpenH264 returned %ld: %s", what, code, log->last);
  else
    rtcc_set_err(err, err_len, "%s: OpenH264 returned %ld", what, code);
}

typedef struct rtcc_h264_enc {
  ISVCEncoder *enc;
  int width, height;
  float fps;
  int target_bps;
  int complexity;
  unsigned intra_period;
  int frame_skip;
  int threads;
  double time_ms; /* capture clock for uiTimeStamp (OpenH264's RC and frame skipping use it) */
  uint8_t *out;
  size_t out_cap;
  rtcc_wels_log log;
} rtcc_h264_enc;

static void rtcc_h264_enc_close(rtcc_h264_enc *e) {
  if (e->enc) {
    (*e->enc)->Uninitialize(e->enc);
    WelsDestroySVCEncoder(e->enc);
    e->enc = NULL;
  }
}

/* WelsCreateSVCEncoder + InitializeExt with the parameters of
 * H264EncoderImpl::CreateEncoderParams (camera, one spatial and temporal
 * layer, packetization mode 1 = one slice per frame). */
static int rtcc_h264_enc_open(rtcc_h264_enc *e, char *err, size_t err_len) {
  SEncParamExt p;
  WelsTraceCallback cb = rtcc_wels_trace;
  void *cb_ctx = &e->log;
  int level = WELS_LOG_WARNING;
  int video_format = videoFormatI420;
  int rv;

  e->log.last[0] = '\0';
  if (WelsCreateSVCEncoder(&e->enc) != 0 || !e->enc) {
    e->enc = NULL;
    rtcc_set_err(err, err_len, "encoder: WelsCreateSVCEncoder failed");
    return -1;
  }
  (*e->enc)->SetOption(e->enc, ENCODER_OPTION_TRACE_CALLBACK_CONTEXT, &cb_ctx);
  (*e->enc)->SetOption(e->enc, ENCODER_OPTION_TRACE_CALLBACK, &cb);
  (*e->enc)->SetOption(e->enc, ENCODER_OPTION_TRACE_LEVEL, &level);

  memset(&p, 0, sizeof(p));
  (*e->enc)->GetDefaultParams(e->enc, &p);
  p.iUsageType = CAMERA_VIDEO_REAL_TIME;
  p.iPicWidth = e->width;
  p.iPicHeight = e->height;
  p.iTargetBitrate = e->target_bps;
  /* WebRTC keeps iMaxBitrate unspecified (crbug.com/webrtc/11543). */
  p.iMaxBitrate = UNSPECIFIED_BIT_RATE;
  p.iRCMode = RC_BITRATE_MODE;
  p.fMaxFrameRate = e->fps;
  p.bEnableFrameSkip = e->frame_skip ? true : false;
  /* uiIntraPeriod = keyFrameInterval (frames); 0 = first frame only. */
  p.uiIntraPeriod = e->intra_period;
  /* libwebrtc used CONSTANT_ID (newer releases SPS_LISTING; equivalent when
   * the encoder is re-created on every resolution change, as here). */
  p.eSpsPpsIdStrategy = CONSTANT_ID;
  p.uiMaxNalSize = 0;
  p.iMultipleThreadIdc = (unsigned short)e->threads;
  /* rtcc mapping of EncoderSettings::speed (libwebrtc leaves the default). */
  p.iComplexityMode = (ECOMPLEXITY_MODE)e->complexity;
  p.iSpatialLayerNum = 1;
  p.sSpatialLayers[0].iVideoWidth = p.iPicWidth;
  p.sSpatialLayers[0].iVideoHeight = p.iPicHeight;
  p.sSpatialLayers[0].fFrameRate = p.fMaxFrameRate;
  p.sSpatialLayers[0].iSpatialBitrate = p.iTargetBitrate;
  p.sSpatialLayers[0].iMaxSpatialBitrate = p.iMaxBitrate;
  p.iTemporalLayerNum = 1;
  /* H264PacketizationMode::NonInterleaved: SM_FIXEDSLCNUM_SLICE, 1 slice. */
  p.sSpatialLayers[0].sSliceArgument.uiSliceNum = 1;
  p.sSpatialLayers[0].sSliceArgument.uiSliceMode = SM_FIXEDSLCNUM_SLICE;

  rv = (*e->enc)->InitializeExt(e->enc, &p);
  if (rv != 0) {
    rtcc_h264_err(err, err_len, "encoder InitializeExt", rv, &e->log);
    WelsDestroySVCEncoder(e->enc);
    e->enc = NULL;
    return -1;
  }
  (*e->enc)->SetOption(e->enc, ENCODER_OPTION_DATAFORMAT, &video_format);
  e->time_ms = 0.0;
  return 0;
}

void rtcc_h264_enc_free(rtcc_h264_enc *e) {
  if (!e) return;
  rtcc_h264_enc_close(e);
  free(e->out);
  free(e);
}

rtcc_h264_enc *rtcc_h264_enc_new(int width, int height, double fps, int target_bps, int complexity,
                                 unsigned intra_period, int frame_skip, int threads, char *err, size_t err_len) {
  rtcc_h264_enc *e = (rtcc_h264_enc *)calloc(1, sizeof(*e));
  if (!e) {
    rtcc_set_err(err, err_len, "encoder: out of memory");
    return NULL;
  }
  e->width = width;
  e->height = height;
  e->fps = (float)fps;
  e->target_bps = target_bps;
  e->complexity = complexity;
  e->intra_period = intra_period;
  e->frame_skip = frame_skip;
  e->threads = threads < 1 ? 1 : threads;
  if (rtcc_h264_enc_open(e, err, err_len) != 0) {
    rtcc_h264_enc_free(e);
    return NULL;
  }
  return e;
}

/* H264EncoderImpl::SetRates: ENCODER_OPTION_BITRATE for SPATIAL_LAYER_ALL and
 * ENCODER_OPTION_FRAME_RATE on the running encoder. */
int rtcc_h264_enc_set_rates(rtcc_h264_enc *e, int target_bps, double fps, char *err, size_t err_len) {
  SBitrateInfo br;
  float f = (float)fps;
  int rv;
  if (!e->enc) {
    rtcc_set_err(err, err_len, "set rates: encoder is not initialised (an earlier reconfiguration failed)");
    return -1;
  }
  memset(&br, 0, sizeof(br));
  br.iLayer = SPATIAL_LAYER_ALL;
  br.iBitrate = target_bps;
  e->log.last[0] = '\0';
  rv = (*e->enc)->SetOption(e->enc, ENCODER_OPTION_BITRATE, &br);
  if (rv != 0) {
    rtcc_h264_err(err, err_len, "set rates (ENCODER_OPTION_BITRATE)", rv, &e->log);
    return -1;
  }
  rv = (*e->enc)->SetOption(e->enc, ENCODER_OPTION_FRAME_RATE, &f);
  if (rv != 0) {
    rtcc_h264_err(err, err_len, "set rates (ENCODER_OPTION_FRAME_RATE)", rv, &e->log);
    return -1;
  }
  e->target_bps = target_bps;
  e->fps = f;
  return 0;
}

/* New resolution: a fresh encoder at the current rates, as libwebrtc's
 * InitEncode does; its first frame is an IDR. */
int rtcc_h264_enc_set_size(rtcc_h264_enc *e, int width, int height, char *err, size_t err_len) {
  rtcc_h264_enc_close(e);
  e->width = width;
  e->height = height;
  return rtcc_h264_enc_open(e, err, err_len);
}

int rtcc_h264_enc_encode(rtcc_h264_enc *e, const uint8_t *y, const uint8_t *u, const uint8_t *v, int width,
                         int height, int force_key, const uint8_t **out, size_t *out_len, int *is_key, int *qp,
                         char *err, size_t err_len) {
  SSourcePicture pic;
  SFrameBSInfo info;
  int rv, layer, nal;
  size_t len = 0;

  *out = NULL;
  *out_len = 0;
  *is_key = 0;
  *qp = -1;
  if (!e->enc) {
    rtcc_set_err(err, err_len, "encode: encoder is not initialised (an earlier reconfiguration failed)");
    return -1;
  }
  if (width != e->width || height != e->height) {
    rtcc_set_err(err, err_len, "encode: picture is %dx%d, encoder is configured for %dx%d", width, height,
                 e->width, e->height);
    return -1;
  }
  memset(&pic, 0, sizeof(pic));
  pic.iColorFormat = videoFormatI420;
  pic.iPicWidth = width;
  pic.iPicHeight = height;
  /* OpenH264 reads the planes through these strides; our planes are tightly
   * packed, so the strides are the plane widths. */
  pic.iStride[0] = width;
  pic.iStride[1] = (width + 1) / 2;
  pic.iStride[2] = (width + 1) / 2;
  pic.pData[0] = (unsigned char *)y;
  pic.pData[1] = (unsigned char *)u;
  pic.pData[2] = (unsigned char *)v;
  pic.uiTimeStamp = (long long)(e->time_ms + 0.5);
  e->time_ms += 1000.0 / (double)e->fps;

  e->log.last[0] = '\0';
  if (force_key) {
    /* libwebrtc: ForceIntraFrame(true) forces an IDR. */
    (*e->enc)->ForceIntraFrame(e->enc, true);
  }
  memset(&info, 0, sizeof(info));
  rv = (*e->enc)->EncodeFrame(e->enc, &pic, &info);
  if (rv != 0) {
    rtcc_h264_err(err, err_len, "EncodeFrame", rv, &e->log);
    return -1;
  }
  if (info.eFrameType == videoFrameTypeSkip || info.eFrameType == videoFrameTypeInvalid) {
    *out = e->out;
    return 0; /* frame skipped by rate control */
  }
  /* Copy every layer's NAL units (with their Annex B start codes), as
   * libwebrtc's RtpFragmentize does. */
  for (layer = 0; layer < info.iLayerNum; ++layer) {
    const SLayerBSInfo *li = &info.sLayerInfo[layer];
    size_t layer_len = 0;
    for (nal = 0; nal < li->iNalCount; ++nal) {
      if (li->pNalLengthInByte[nal] < 0) {
        rtcc_set_err(err, err_len, "EncodeFrame: negative NAL length");
        return -1;
      }
      layer_len += (size_t)li->pNalLengthInByte[nal];
    }
    if (rtcc_reserve(&e->out, &e->out_cap, len + layer_len) != 0) {
      rtcc_set_err(err, err_len, "encode: out of memory");
      return -1;
    }
    if (layer_len) memcpy(e->out + len, li->pBsBuf, layer_len);
    len += layer_len;
  }
  /* The QP is left at -1: OpenH264's uiAverageFrameQP statistic is not
   * maintained (always 0), so the Rust side parses the slice header, as
   * libwebrtc does with H264BitstreamParser. */
  *out = e->out;
  *out_len = len;
  *is_key = info.eFrameType == videoFrameTypeIDR;
  return 0;
}

typedef struct rtcc_h264_dec {
  ISVCDecoder *dec;
  unsigned char *planes[3];
  int strides[2];
  int width, height;
  rtcc_wels_log log;
} rtcc_h264_dec;

void rtcc_h264_dec_free(rtcc_h264_dec *d) {
  if (!d) return;
  if (d->dec) {
    (*d->dec)->Uninitialize(d->dec);
    WelsDestroyDecoder(d->dec);
  }
  free(d);
}

rtcc_h264_dec *rtcc_h264_dec_new(char *err, size_t err_len) {
  SDecodingParam p;
  WelsTraceCallback cb = rtcc_wels_trace;
  void *cb_ctx;
  int level = WELS_LOG_WARNING;
  long rv;
  rtcc_h264_dec *d = (rtcc_h264_dec *)calloc(1, sizeof(*d));
  if (!d) {
    rtcc_set_err(err, err_len, "decoder: out of memory");
    return NULL;
  }
  cb_ctx = &d->log;
  if (WelsCreateDecoder(&d->dec) != 0 || !d->dec) {
    d->dec = NULL;
    rtcc_set_err(err, err_len, "decoder: WelsCreateDecoder failed");
    rtcc_h264_dec_free(d);
    return NULL;
  }
  (*d->dec)->SetOption(d->dec, DECODER_OPTION_TRACE_CALLBACK_CONTEXT, &cb_ctx);
  (*d->dec)->SetOption(d->dec, DECODER_OPTION_TRACE_CALLBACK, &cb);
  (*d->dec)->SetOption(d->dec, DECODER_OPTION_TRACE_LEVEL, &level);
  memset(&p, 0, sizeof(p));
  p.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
  /* Report broken references as errors instead of concealing them. */
  p.eEcActiveIdc = ERROR_CON_DISABLE;
  rv = (*d->dec)->Initialize(d->dec, &p);
  if (rv != 0) {
    rtcc_h264_err(err, err_len, "decoder Initialize", rv, &d->log);
    rtcc_h264_dec_free(d);
    return NULL;
  }
  return d;
}

int rtcc_h264_dec_decode(rtcc_h264_dec *d, const uint8_t *data, size_t len, int *width, int *height, char *err,
                         size_t err_len) {
  unsigned char *dst[3] = {NULL, NULL, NULL};
  SBufferInfo info;
  DECODING_STATE st;
  d->planes[0] = d->planes[1] = d->planes[2] = NULL;
  if (len > 0x7fffffff) {
    rtcc_set_err(err, err_len, "decode: %zu bytes is too large", len);
    return -1;
  }
  memset(&info, 0, sizeof(info));
  d->log.last[0] = '\0';
  st = (*d->dec)->DecodeFrameNoDelay(d->dec, data, (int)len, dst, &info);
  if (st != dsErrorFree) {
    rtcc_h264_err(err, err_len, "DecodeFrameNoDelay (DECODING_STATE flags)", (long)st, &d->log);
    return -1;
  }
  if (info.iBufferStatus != 1 || !dst[0] || !dst[1] || !dst[2]) return 0;
  if (info.UsrData.sSystemBuffer.iFormat != videoFormatI420) {
    rtcc_set_err(err, err_len, "decode: unexpected output format %d", info.UsrData.sSystemBuffer.iFormat);
    return -1;
  }
  d->planes[0] = dst[0];
  d->planes[1] = dst[1];
  d->planes[2] = dst[2];
  d->strides[0] = info.UsrData.sSystemBuffer.iStride[0];
  d->strides[1] = info.UsrData.sSystemBuffer.iStride[1];
  d->width = info.UsrData.sSystemBuffer.iWidth;
  d->height = info.UsrData.sSystemBuffer.iHeight;
  *width = d->width;
  *height = d->height;
  return 1;
}

int rtcc_h264_dec_copy(rtcc_h264_dec *d, uint8_t *y, uint8_t *u, uint8_t *v) {
  int w = d->width, h = d->height, cw, ch;
  if (!d->planes[0]) return -1;
  cw = (w + 1) / 2;
  ch = (h + 1) / 2;
  rtcc_copy_plane(y, w, d->planes[0], d->strides[0], w, h);
  rtcc_copy_plane(u, cw, d->planes[1], d->strides[1], cw, ch);
  rtcc_copy_plane(v, cw, d->planes[2], d->strides[1], cw, ch);
  return 0;
}

#endif /* RTCC_HAVE_OPENH264 */

// Test mode's synthetic answers (synthetic.ts): nominal media. Test mode fetches nothing, so the
// real size of an image, the length of a video or audio file and the points of a lidar frame are
// unknown. Every synthetic answer assumes these stand-ins instead.

/** Images (and video frames) are taken to be 1024×768 pixels, a common 4:3 frame size. */
export const NOMINAL_IMAGE = { width: 1024, height: 768 } as const;
/** A PDF page is taken to be US Letter at 72 dpi, i.e. 612×792 PDF points (documenttranscription's unit for PDFs). */
export const NOMINAL_PDF_PAGE = { width: 612, height: 792 } as const;
/** A video attachment is taken to last 10 seconds; its frames are sampled at the task's `frame_rate`. */
export const NOMINAL_VIDEO_SECONDS = 10;
/** An audio attachment is taken to last 30 seconds. */
export const NOMINAL_AUDIO_SECONDS = 30;
/** A lidar frame is taken to hold 32 points (the response labels each point of the frame file, which is not read). */
export const NOMINAL_LIDAR_POINTS = 32;
/**
 * Where segmentation masks "live". Test mode paints no masks, so no URL could point at a real
 * file; a host under `.invalid` (RFC 6761) says so plainly: it never resolves, cannot collide with
 * anyone's server, and our own service treats a `.invalid` attachment as a failed fetch, so a mask
 * passed on as another test task's attachment fails honestly instead of fetching something else.
 */
export const SYNTHETIC_MASK_ORIGIN = 'https://synthetic-masks.humantask.invalid';

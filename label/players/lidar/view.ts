// The point cloud on screen: three.js draws the points (one Points object, a colour per point) and
// OrbitControls turns the view (left drag orbits, right drag or Shift+drag pans, the wheel zooms
// around the pointer). The lasso is ours: a 2D canvas over the view where the drag is drawn, then
// the points are projected with the camera's matrix and tested against the polygon (cloud.ts).
// Without WebGL (a browser or machine that refuses it), the same projection paints the points on
// that 2D canvas instead: slower, but the work can still be done.
import {
  BufferAttribute,
  BufferGeometry,
  Color,
  LinearSRGBColorSpace,
  Matrix4,
  PerspectiveCamera,
  Points,
  PointsMaterial,
  Scene,
  Sphere,
  Vector3,
  WebGLRenderer,
} from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { projectPoints } from './cloud.ts';

export type Mode = 'view' | 'lasso';

/** The renderer's name when WebGL runs on the CPU (SwiftShader, llvmpipe, ...), else null. */
function softwareRenderer(gl: WebGLRenderingContext | WebGL2RenderingContext): string | null {
  const info = gl.getExtension('WEBGL_debug_renderer_info');
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  return /swiftshader|llvmpipe|softpipe|software|microsoft basic render/i.test(name) ? name : null;
}

export interface ViewEvents {
  /** A lasso was drawn: its polygon in CSS pixels of the view (x y pairs), with the camera matrix and size it was drawn under. */
  lasso(polygon: Float32Array, matrix: Float32Array, width: number, height: number): void;
}

/** Lasso vertices closer than this (CSS pixels) to the last one are skipped. */
const LASSO_STEP = 3;

export class CloudView {
  private readonly scene = new Scene();
  private readonly camera = new PerspectiveCamera(50, 1, 0.01, 1000);
  private readonly controls: OrbitControls;
  private readonly renderer: WebGLRenderer | null;
  private readonly overlay: HTMLCanvasElement;
  private readonly geometry = new BufferGeometry();
  private readonly material = new PointsMaterial({ size: 3, sizeAttenuation: false, vertexColors: true });
  private readonly points = new Points(this.geometry, this.material);
  private readonly resize: ResizeObserver;
  private readonly matrix = new Matrix4();
  private positions: Float32Array = new Float32Array(0);
  private colors: Uint8Array = new Uint8Array(0);
  private width = 1;
  private height = 1;
  private frameRequest = 0;
  private lassoPath: number[] | null = null;
  mode: Mode = 'lasso';
  /** Why WebGL is not used, when it is not. */
  readonly fallback: string | null;

  constructor(
    private readonly holder: HTMLElement,
    private readonly events: ViewEvents,
    /** `auto`: WebGL where the GPU draws it, else 2D; `webgl` or `2d` to choose. */
    choice: 'auto' | 'webgl' | '2d' = 'auto',
  ) {
    let renderer: WebGLRenderer | null = null;
    let why: string | null = choice === '2d' ? 'the 2D view was asked for' : null;
    if (choice !== '2d') {
      try {
        renderer = new WebGLRenderer({ antialias: false, powerPreference: 'high-performance' });
        const software = choice === 'auto' ? softwareRenderer(renderer.getContext()) : null;
        if (software) {
          // Measured (bench/label-lidar.ts): on SwiftShader, 100,000 points cost the main thread
          // several times what the 2D bitmap does, with long stalls while the view turns.
          renderer.dispose();
          renderer = null;
          why = `WebGL is drawn in software here (${software}); the 2D view is faster`;
        } else {
          renderer.setPixelRatio(Math.min(2, window.devicePixelRatio || 1));
          // The colours are given as they should show (sRGB bytes): no conversion on output.
          renderer.outputColorSpace = LinearSRGBColorSpace;
          renderer.setClearColor(new Color().setRGB(0x1b / 255, 0x1b / 255, 0x1b / 255, LinearSRGBColorSpace));
          holder.append(renderer.domElement);
        }
      } catch (err) {
        renderer = null;
        why = `WebGL is not available (${err instanceof Error ? err.message : String(err)})`;
      }
    }
    this.renderer = renderer;
    this.fallback = why;
    this.overlay = document.createElement('canvas');
    this.overlay.className = 'lidar-overlay';
    holder.append(this.overlay);
    this.camera.up.set(0, 0, 1);
    this.scene.add(this.points);
    this.geometry.setAttribute('position', new BufferAttribute(this.positions, 3));
    this.geometry.setAttribute('color', new BufferAttribute(this.colors, 3, true));

    // The controls listen on the holder: a press on the overlay reaches them unless the lasso takes it.
    this.controls = new OrbitControls(this.camera, holder);
    this.controls.zoomToCursor = true;
    this.controls.addEventListener('change', () => this.requestRender());
    this.overlay.addEventListener('pointerdown', (e) => this.lassoStart(e));
    this.overlay.addEventListener('pointermove', (e) => this.lassoMove(e));
    this.overlay.addEventListener('pointerup', (e) => this.lassoEnd(e));
    this.overlay.addEventListener('pointercancel', () => this.lassoCancel());
    this.resize = new ResizeObserver(() => this.fitSize());
    this.resize.observe(holder);
    this.fitSize();
  }

  /** Shows a frame's points (x y z triples) and their colours (r g b bytes), the view fitted to them when `fit`. */
  setPoints(positions: Float32Array, colors: Uint8Array, fit: boolean): void {
    this.positions = positions;
    this.colors = colors;
    this.geometry.setAttribute('position', new BufferAttribute(positions, 3));
    this.geometry.setAttribute('color', new BufferAttribute(colors, 3, true));
    this.geometry.computeBoundingSphere();
    if (fit) this.resetView();
    else this.requestRender();
  }

  /** The colours changed (the same array as given). */
  colorsChanged(): void {
    const attribute = this.geometry.getAttribute('color');
    attribute.needsUpdate = true;
    this.requestRender();
  }

  /** The view from the south-west, above, the whole frame in sight. */
  resetView(): void {
    const sphere = this.geometry.boundingSphere ?? new Sphere(new Vector3(), 1);
    const radius = Math.max(sphere.radius, 0.1);
    const distance = (radius / Math.sin((this.camera.fov * Math.PI) / 360)) * 1.05;
    this.camera.near = radius / 1000;
    this.camera.far = distance + radius * 20;
    this.camera.position.copy(sphere.center).addScaledVector(new Vector3(-0.55, -0.65, 0.52).normalize(), distance);
    this.controls.target.copy(sphere.center);
    this.controls.minDistance = radius / 200;
    this.controls.maxDistance = distance * 5;
    this.camera.updateProjectionMatrix();
    this.controls.update();
    this.requestRender();
  }

  /** Orbits by angles in radians (left: around the vertical axis). */
  orbit(left: number, up: number): void {
    this.controls.rotateLeft(left);
    this.controls.rotateUp(up);
    this.controls.update();
  }

  zoom(factor: number): void {
    if (factor > 1) this.controls.dollyIn(factor);
    else this.controls.dollyOut(1 / factor);
    this.controls.update();
  }

  pan(dx: number, dy: number): void {
    this.controls.pan(dx, dy);
    this.controls.update();
  }

  setPointSize(px: number): void {
    this.material.size = px;
    this.requestRender();
  }

  setMode(mode: Mode): void {
    this.mode = mode;
    this.holder.dataset.mode = mode;
    this.lassoCancel();
  }

  /** Projection times view, column-major: what a test or the lasso needs to find a point on screen. */
  viewMatrix(): Float32Array {
    this.camera.updateMatrixWorld();
    return Float32Array.from(this.matrix.multiplyMatrices(this.camera.projectionMatrix, this.camera.matrixWorldInverse).elements);
  }

  /** Draws now (the benchmark's frame), not at the next animation frame. */
  renderNow(): void {
    cancelAnimationFrame(this.frameRequest);
    this.frameRequest = 0;
    this.draw();
  }

  requestRender(): void {
    if (this.frameRequest) return;
    this.frameRequest = requestAnimationFrame(() => {
      this.frameRequest = 0;
      this.draw();
    });
  }

  destroy(): void {
    cancelAnimationFrame(this.frameRequest);
    this.resize.disconnect();
    this.controls.dispose();
    this.geometry.dispose();
    this.material.dispose();
    this.renderer?.dispose();
    // A browser keeps only a few WebGL contexts: this one goes now, not when it is collected.
    this.renderer?.forceContextLoss();
  }

  // ---- drawing -------------------------------------------------------------------------------

  private fitSize(): void {
    this.width = Math.max(1, this.holder.clientWidth);
    this.height = Math.max(1, this.holder.clientHeight);
    this.camera.aspect = this.width / this.height;
    this.camera.updateProjectionMatrix();
    this.renderer?.setSize(this.width, this.height);
    const ratio = Math.min(2, window.devicePixelRatio || 1);
    this.overlay.width = this.width * ratio;
    this.overlay.height = this.height * ratio;
    this.overlay.style.width = `${this.width}px`;
    this.overlay.style.height = `${this.height}px`;
    this.requestRender();
  }

  private draw(): void {
    const matrix = this.viewMatrix();
    this.holder.dataset.matrix = Array.from(matrix, (v) => v.toPrecision(9)).join(',');
    this.holder.dataset.size = `${this.width}x${this.height}`;
    if (this.renderer) this.renderer.render(this.scene, this.camera);
    this.drawOverlay(matrix);
  }

  private drawOverlay(matrix: Float32Array): void {
    const ctx = this.overlay.getContext('2d');
    if (!ctx) return;
    const ratio = this.overlay.width / this.width;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    if (this.renderer) ctx.clearRect(0, 0, this.width, this.height);
    else this.paintPoints(ctx, matrix);
    const path = this.lassoPath;
    if (path && path.length >= 4) {
      ctx.beginPath();
      ctx.moveTo(path[0] as number, path[1] as number);
      for (let k = 2; k < path.length; k += 2) ctx.lineTo(path[k] as number, path[k + 1] as number);
      ctx.closePath();
      ctx.fillStyle = 'rgba(255, 210, 0, 0.15)';
      ctx.fill();
      ctx.lineWidth = 1.5;
      ctx.setLineDash([6, 4]);
      ctx.strokeStyle = '#ffd200';
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }

  /** The fallback: every point projected and written as a small square into one bitmap (no depth order: later points win). */
  private paintPoints(ctx: CanvasRenderingContext2D, m: Float32Array): void {
    const { width: W, height: H } = this.overlay;
    const ratio = W / this.width;
    const image = ctx.createImageData(W, H);
    const pixels = new Uint32Array(image.data.buffer);
    pixels.fill(0xff1b1b1b);
    const size = Math.max(1, Math.round(this.material.size * ratio));
    const half = Math.floor(size / 2);
    const c = this.colors;
    projectPoints(this.positions, m, W, H, (i, x, y) => {
      const sx = Math.round(x) - half;
      const sy = Math.round(y) - half;
      if (sx + size <= 0 || sy + size <= 0 || sx >= W || sy >= H) return;
      // ImageData is RGBA bytes: read as a little-endian 32-bit word, that is 0xAABBGGRR.
      const colour = (0xff000000 | ((c[3 * i + 2] as number) << 16) | ((c[3 * i + 1] as number) << 8) | (c[3 * i] as number)) >>> 0;
      for (let row = Math.max(0, sy); row < Math.min(H, sy + size); row++)
        pixels.fill(colour, row * W + Math.max(0, sx), row * W + Math.min(W, sx + size));
    });
    ctx.putImageData(image, 0, 0);
  }

  // ---- the lasso ------------------------------------------------------------------------------

  private at(e: PointerEvent): [number, number] {
    const box = this.overlay.getBoundingClientRect();
    return [e.clientX - box.left, e.clientY - box.top];
  }

  private lassoStart(e: PointerEvent): void {
    if (this.mode !== 'lasso' || e.button !== 0 || e.shiftKey) return;
    // Taken here: the controls (on the holder) do not orbit with this press.
    e.stopPropagation();
    this.overlay.setPointerCapture(e.pointerId);
    this.lassoPath = this.at(e);
  }

  private lassoMove(e: PointerEvent): void {
    const path = this.lassoPath;
    if (!path) return;
    e.stopPropagation();
    const [x, y] = this.at(e);
    const lastX = path[path.length - 2] as number;
    const lastY = path[path.length - 1] as number;
    if (Math.hypot(x - lastX, y - lastY) < LASSO_STEP) return;
    path.push(x, y);
    this.requestRender();
  }

  private lassoEnd(e: PointerEvent): void {
    const path = this.lassoPath;
    if (!path) return;
    e.stopPropagation();
    path.push(...this.at(e));
    this.lassoPath = null;
    this.requestRender();
    if (path.length >= 6) this.events.lasso(Float32Array.from(path), this.viewMatrix(), this.width, this.height);
  }

  private lassoCancel(): void {
    this.lassoPath = null;
    this.requestRender();
  }
}

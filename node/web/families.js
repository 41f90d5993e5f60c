// How each family's prompt is shown and answered. A renderer fills the answer area and returns
// `{answer(), auto?}`: `answer()` gives the answer string (or '' when nothing is chosen yet);
// `auto` is true for families that send themselves when done (attention). A family without a
// renderer of its own gets the text and a free-text answer. `context` carries what the app knows
// beyond the prompt: the enrolled passkeys and `assert()`, which signs this challenge with one.

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') node.textContent = v;
    else if (v === true) node.setAttribute(k, '');
    else if (v !== false && v != null) node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

function freeText(area, inputmode) {
  const input = el('input', { id: 'answer', name: 'answer', autocomplete: 'off', spellcheck: 'false', inputmode, required: true });
  area.append(el('label', { for: 'answer', text: 'Your answer' }), input);
  return { answer: () => input.value.trim(), focus: input };
}

/** A radio group; `options` are `[value, label]` pairs. */
function choices(name, legend, options) {
  const set = el('fieldset', { class: 'choices' }, el('legend', { text: legend }));
  options.forEach(([value, label], i) => {
    const id = `${name}-${i}`;
    set.append(el('div', { class: 'choice' },
      el('input', { type: 'radio', id, name, value, required: true }),
      el('label', { for: id, text: label })));
  });
  return set;
}

function checked(form, name) {
  const input = form.querySelector(`input[name="${name}"]:checked`);
  return input ? input.value : '';
}

function image(b64, alt, data) {
  return el('img', { src: `data:image/png;base64,${b64}`, alt, width: data.width, height: data.height, class: 'puzzle' });
}

const RENDERERS = {
  arithmetic_reasoning: (prompt, area) => freeText(area, 'numeric'),

  interactive_reasoning: interactive,

  visual_match: (prompt, area) => {
    // Transcription: one distorted image of `length` letters, shown at twice its size, and a
    // text field (letters only; Enter sends). People who cannot see it opt out of visual
    // families at registration and never get it.
    const d = prompt.data;
    const img = image(d.images[0], d.alt[0], d);
    img.width = 2 * d.width;
    img.height = 2 * d.height;
    area.append(el('figure', {}, img));
    const input = el('input', {
      id: 'answer', name: 'answer', autocomplete: 'off', spellcheck: 'false', required: true,
      autocapitalize: 'characters', maxlength: 2 * d.length + 4, inputmode: 'text',
      'aria-describedby': 'prompt-text', class: 'transcribe',
    });
    area.append(el('label', { for: 'answer', text: `The ${d.length} letters` }), input);
    return { answer: () => input.value.trim(), focus: input };
  },

  attention: attention,
  presence: presence,
};

/** Shows `prompt` in `area` (inside `form`); `done()` is called when the family sends itself. */
export function render(prompt, area, form, done, context) {
  const renderer = RENDERERS[prompt.family];
  return renderer ? renderer(prompt, area, form, done, context) : freeText(area);
}

/**
 * interactive_reasoning: two pictures; the second comes from the issuer after a right click on
 * the first (`context.stage`). A click (or tap) on the picture marks a point; with the keyboard,
 * the arrow keys move a crosshair (Shift: farther) and Enter or Space marks it. In stage 1 one
 * mark (a new one replaces it); in stage 2 marks toggle. Send moves on to stage 2, then answers.
 */
function interactive(prompt, area, form, done, context) {
  let d = prompt.data;
  let first = '';
  let marks = [];
  let cross = { x: Math.round(d.width / 2), y: Math.round(d.height / 2) };
  const img = image(d.image, d.alt, d);
  img.id = 'scene';
  img.draggable = false;
  const hair = el('span', { class: 'crosshair', 'aria-hidden': 'true' });
  const board = el('div', {
    id: 'scene-board', class: 'scene', tabindex: '0', role: 'application',
    'aria-label': 'picture: arrow keys move the crosshair, Enter marks a shape',
  }, img, hair);
  const status = el('p', { id: 'scene-status', role: 'status', 'aria-live': 'polite' });
  const scale = () => img.clientWidth / d.width;
  const place = (node, p) => {
    node.style.left = `${p.x * scale()}px`;
    node.style.top = `${p.y * scale()}px`;
  };
  const redraw = () => {
    board.querySelectorAll('.mark').forEach((m) => m.remove());
    for (const p of marks) {
      const m = el('span', { class: 'mark', 'aria-hidden': 'true' });
      place(m, p);
      board.append(m);
    }
    place(hair, cross);
    status.textContent = `Stage ${d.stage} of ${d.stages}: ${marks.length} shape(s) marked.`;
  };
  const mark = (p) => {
    if (d.stage === 1) {
      marks = [p];
    } else {
      const near = marks.findIndex((m) => Math.hypot(m.x - p.x, m.y - p.y) < 10);
      if (near >= 0) marks.splice(near, 1);
      else if (marks.length < 4) marks.push(p);
    }
    redraw();
  };
  img.addEventListener('click', (e) => {
    const r = img.getBoundingClientRect();
    const p = {
      x: Math.min(d.width - 1, Math.max(0, Math.round((e.clientX - r.left) / scale()))),
      y: Math.min(d.height - 1, Math.max(0, Math.round((e.clientY - r.top) / scale()))),
    };
    cross = p;
    mark(p);
  });
  board.addEventListener('keydown', (e) => {
    const step = e.shiftKey ? 24 : 6;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
    if (moves[e.key]) {
      cross = {
        x: Math.min(d.width - 1, Math.max(0, cross.x + moves[e.key][0])),
        y: Math.min(d.height - 1, Math.max(0, cross.y + moves[e.key][1])),
      };
      redraw();
    } else if (e.key === 'Enter' || e.key === ' ') {
      mark({ ...cross });
    } else {
      return;
    }
    e.preventDefault();
  });
  area.append(el('figure', {}, board), status);
  img.addEventListener('load', redraw);
  redraw();
  const clicks = () => marks.map((p) => `${p.x},${p.y}`).join(';');
  return {
    answer: () => (marks.length === 0 ? '' : d.stage === 1 ? clicks() : `${first}|${clicks()}`),
    focus: board,
    // Stage 1: the click goes to the issuer, which answers with stage 2 (or a final verdict).
    advance: async () => {
      if (d.stage !== 1) return false;
      const next = await context.stage(1, clicks());
      first = clicks();
      d = next.prompt.data;
      marks = [];
      cross = { x: Math.round(d.width / 2), y: Math.round(d.height / 2) };
      img.src = `data:image/png;base64,${d.image}`;
      img.alt = d.alt;
      context.text(next.prompt.text);
      redraw();
      board.focus();
      return true;
    },
  };
}

/**
 * A touch prompt's cue: a short tone (when the page may play sound: after any click on it) and
 * a flash of the challenge box. The prompt's reaction window is a few seconds; the cue is what
 * tells a person who looked away that it has begun.
 */
function cue(form) {
  form.classList.remove('cue-flash');
  void form.offsetWidth; // restart the animation
  form.classList.add('cue-flash');
  try {
    const Audio = window.AudioContext || window.webkitAudioContext;
    if (!Audio) return;
    cue.audio = cue.audio || new Audio();
    const ctx = cue.audio;
    if (ctx.state === 'suspended') ctx.resume();
    const tone = ctx.createOscillator();
    const gain = ctx.createGain();
    tone.frequency.value = 880;
    gain.gain.setValueAtTime(0.2, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.4);
    tone.connect(gain).connect(ctx.destination);
    tone.start();
    tone.stop(ctx.currentTime + 0.4);
  } catch (_) {
    // No sound: the flash and the browser's own passkey dialog remain.
  }
}

/**
 * presence: one button; the passkey's assertion over the challenge id is the answer. Inside a
 * ceremony slot each presence step is a touch prompt with a reaction window of a few seconds,
 * so the page sounds the cue and asks the browser for the passkey at once (`context.prompt`);
 * the button stays for a retry.
 */
function presence(prompt, area, form, done, context) {
  const enrolled = context.passkeys.passkeys.length > 0;
  const status = el('p', {
    id: 'presence-status',
    role: 'status',
    'aria-live': 'polite',
    text: enrolled
      ? 'Press the button, then confirm with your passkey.'
      : 'Enrol a passkey first (in the Passkey section above).',
  });
  const go = el('button', { type: 'button', id: 'presence-go', text: 'Use my passkey', disabled: !enrolled });
  let answer = '';
  go.addEventListener('click', async () => {
    go.disabled = true;
    try {
      answer = await context.assert();
      status.textContent = 'Passkey used; sending.';
      await done();
      // After a rejection that does not end the challenge, the passkey can be used again.
      go.disabled = context.finished();
      if (!go.disabled) status.textContent = 'Not accepted (see the verdict); you can use the passkey again.';
    } catch (e) {
      status.textContent = `The passkey was not used (${e.name || 'error'}); press the button to try again.`;
      go.disabled = false;
    }
  });
  area.append(status, go);
  if (context.prompt && enrolled) {
    status.textContent = 'Touch your security key now.';
    cue(form);
    setTimeout(() => go.click(), 0);
  }
  return { answer: () => answer, auto: true, focus: go };
}

/**
 * attention: the node plays the challenge as a stream of frames (server-sent events) drawn on
 * the grid; a click (or tap) on the frame, or a cell chosen with the arrow keys and Enter (its
 * centre), is posted to the node, which times it on receipt. One click per flash of letters.
 * The answer is the log the node seals at the end of the stream; it is sent at once.
 */
function attention(prompt, area, form, done, context) {
  const d = prompt.data;
  const grid = d.grid;
  const status = el('p', { id: 'attention-status', role: 'status', 'aria-live': 'polite', text: `Press Start when ready, then watch for the letter ${d.cue}.` });
  const cue = el('p', { id: 'attention-cue', class: 'cue', text: d.cue, 'aria-label': `the letter to click: ${d.cue}` });
  const arena = el('div', { id: 'arena', role: 'group', 'aria-label': `grid of ${grid} by ${grid} cells` });
  arena.style.setProperty('--grid', grid);
  const frame = el('img', { id: 'attention-frame', alt: '', 'aria-hidden': 'true', draggable: 'false' });
  arena.append(frame);
  const cells = [];
  for (let r = 0; r < grid; r++) {
    for (let c = 0; c < grid; c++) {
      const cell = el('button', { type: 'button', class: 'cell', 'data-row': r, 'data-col': c, tabindex: r + c === 0 ? 0 : -1, 'aria-label': `row ${r + 1}, column ${c + 1}` });
      cells.push(cell);
      arena.append(cell);
    }
  }
  const start = el('button', { type: 'button', id: 'attention-start', text: 'Start' });
  area.append(status, cue, start, arena);

  let clicksPath = null;
  let showing = false; // letters on screen, not yet clicked
  let answer = '';
  let flashes = 0;
  let clicked = 0;

  start.addEventListener('click', async () => {
    start.disabled = true;
    try {
      const opened = await context.openStream();
      clicksPath = opened.clicks;
      const source = new EventSource(opened.events);
      source.addEventListener('frame', (ev) => {
        const f = JSON.parse(ev.data);
        frame.src = `data:image/png;base64,${f.png}`;
        showing = f.i % 2 === 1;
        if (showing) flashes += 1;
        arena.dataset.frame = f.i;
        status.textContent = showing ? `Flash ${flashes} of ${d.events}: is there a ${d.cue}?` : 'Watch the grid.';
      });
      source.addEventListener('log', async (ev) => {
        source.close();
        answer = JSON.parse(ev.data).answer;
        showing = false;
        status.textContent = `Finished: ${clicked} clicked. Sending.`;
        await done();
      });
      source.onerror = () => {
        if (!answer) status.textContent = 'The stream was interrupted.';
        source.close();
      };
      status.textContent = 'Watch the grid.';
      cells[0].focus();
    } catch (e) {
      status.textContent = `The stream did not open (${e.code || e.message}).`;
    }
  });

  arena.addEventListener('click', async (e) => {
    if (!clicksPath || !showing) return;
    const cell = e.target.closest('.cell');
    let x;
    let y;
    if (e.detail === 0 && cell) {
      // Keyboard: the centre of the chosen cell.
      const size = d.frame / grid;
      x = (Number(cell.dataset.col) + 0.5) * size;
      y = (Number(cell.dataset.row) + 0.5) * size;
    } else {
      const rect = arena.getBoundingClientRect();
      x = ((e.clientX - rect.left) * d.frame) / rect.width;
      y = ((e.clientY - rect.top) * d.frame) / rect.height;
    }
    x = Math.min(d.frame - 1, Math.max(0, Math.round(x)));
    y = Math.min(d.frame - 1, Math.max(0, Math.round(y)));
    showing = false; // one click per flash
    clicked += 1;
    status.textContent = 'Clicked.';
    try {
      await fetch(clicksPath, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x, y }) });
    } catch (err) {
      status.textContent = 'The click did not reach the node.';
    }
  });

  arena.addEventListener('keydown', (e) => {
    const cell = e.target.closest('.cell');
    if (!cell) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const move = moves[e.key];
    if (!move) return;
    e.preventDefault();
    const r = Math.min(grid - 1, Math.max(0, Number(cell.dataset.row) + move[0]));
    const c = Math.min(grid - 1, Math.max(0, Number(cell.dataset.col) + move[1]));
    const next = cells[r * grid + c];
    cell.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  });

  return {
    auto: true,
    focus: start,
    answer: () => answer,
  };
}

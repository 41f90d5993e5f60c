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

  interactive_reasoning: (prompt, area, form) => {
    const letters = ['A', 'B', 'C', 'D'];
    const options = (prompt.data.choices || []).map((c, i) => [letters[i], `${letters[i]}) ${c}`]);
    area.append(choices('choice', 'Your answer', options));
    return { answer: () => checked(form, 'choice') };
  },

  visual_match: (prompt, area, form) => {
    const d = prompt.data;
    if (d.mode === 'pix') {
      area.append(el('figure', {}, image(d.images[0], d.alt[0], d)));
      area.append(choices('choice', 'Which word does the image show?', d.choices.map((c) => [c, c])));
      return { answer: () => checked(form, 'choice') };
    }
    const rounds = d.rounds || d.images.length / 2;
    for (let r = 0; r < rounds; r++) {
      const pair = el('div', { class: 'pair' },
        el('figure', {}, image(d.images[2 * r], d.alt[2 * r], d), el('figcaption', { text: 'Reference' })),
        el('figure', {}, image(d.images[2 * r + 1], d.alt[2 * r + 1], d), el('figcaption', { text: 'Distorted' })));
      const set = choices(`round-${r}`, `Round ${r + 1}: the same word?`, [['S', 'Same word'], ['D', 'Different word']]);
      set.querySelector('legend').after(pair);
      area.append(set);
    }
    return {
      answer: () => {
        const picks = Array.from({ length: rounds }, (_, r) => checked(form, `round-${r}`));
        return picks.every((p) => p) ? picks.join('') : '';
      },
    };
  },

  attention: attention,
  presence: presence,
};

/** Shows `prompt` in `area` (inside `form`); `done()` is called when the family sends itself. */
export function render(prompt, area, form, done, context) {
  const renderer = RENDERERS[prompt.family];
  return renderer ? renderer(prompt, area, form, done, context) : freeText(area);
}

/** presence: one button; the passkey's assertion over the challenge id is the answer. */
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

// SPDX-License-Identifier: GPL-2.0-or-later
// qemu-spice's console page. The credential travels after '#' in the link:
// browsers never send the fragment, so no server or proxy logs it. The page
// takes it out of the address bar and the history at once, asks the helper
// whether a token is still good (a refusal is explained here, not as a
// bare link error), then connects spice-html5 (Debian's, served by the
// helper under /spice-html5/) to the same port over WebSocket.
import * as SpiceHtml5 from '/spice-html5/main.js';

const REFUSED = {
    expired: 'This console link has expired. Ask for a new one.',
    used: 'This console link has been used already: a link opens the ' +
          'console once. Ask for a new one.',
    wrong: 'This console link is not valid for this console (mistyped, cut ' +
           'short, or made for another one). Ask for a new one.',
    busy: 'The console takes no more single-use links for now. Try again ' +
          'in a few minutes, or ask for a link that is not single-use.',
    missing: 'This address has no console token after its "#". Open the ' +
             'whole link you were given.',
};

let conn = null;

function status(state, text) {
    document.body.dataset.state = state;
    document.getElementById('qs-status').textContent = text;
}

function refuse(state, text) {
    if (conn) {
        conn.stop();
        conn = null;
    }
    const box = document.getElementById('qs-message');
    box.textContent = text;
    box.hidden = false;
    document.getElementById('qs-cad').hidden = true;
    status(state, 'Not connected');
}

// The fragment, gone from the address bar and the history entry.
function takeCredential() {
    const fragment = window.location.hash.slice(1);
    window.history.replaceState(null, '', window.location.pathname);
    try {
        return decodeURIComponent(fragment);
    } catch (e) {
        return fragment;
    }
}

// "valid", "ticket" (not a token: a password for the link itself) or a
// key of REFUSED.
async function credentialState(credential) {
    const reply = await fetch('/qs/token-state', {
        headers: { Authorization: 'Bearer ' + credential },
        cache: 'no-store',
        credentials: 'omit',
    });
    if (!reply.ok) {
        throw new Error('the helper answered ' + reply.status);
    }
    return (await reply.json()).state;
}

function connect(password) {
    const scheme = window.location.protocol === 'https:' ? 'wss://' : 'ws://';
    status('connecting', 'Connecting…');
    conn = new SpiceHtml5.SpiceMainConn({
        uri: scheme + window.location.host + '/',
        screen_id: 'qs-screen',
        password: password,
        onsuccess: () => {
            status('connected', 'Connected');
            document.getElementById('qs-cad').hidden = false;
        },
        onerror: (e) => {
            const why = e && e.message === 'Permission denied.'
                ? 'The console refused this link (expired, used or wrong). ' +
                  'Ask for a new one.'
                : 'The connection to the console failed' +
                  (e && e.message ? ': ' + e.message : '.');
            refuse('refused', why);
        },
    });
}

async function main() {
    const credential = takeCredential();
    // Another link opened in this tab differs only after '#', which a
    // browser takes for a move within the page: start again with it.
    window.addEventListener('hashchange', () => window.location.reload());
    document.getElementById('qs-cad').addEventListener('click', () => {
        if (conn) {
            SpiceHtml5.sendCtrlAltDel(conn);
        }
    });
    if (!credential) {
        refuse('missing', REFUSED.missing);
        return;
    }
    let state;
    try {
        state = await credentialState(credential);
    } catch (e) {
        refuse('error', 'The console could not be reached: ' + e.message);
        return;
    }
    if (state === 'valid' || state === 'ticket') {
        connect(credential);
    } else {
        refuse(state, REFUSED[state] || REFUSED.wrong);
    }
}

main();

// Plain message pages (404 and errors): only the shared header behaviour.
import './common.js';

//! Cross-crate integration tests of the Human Challenge Oracle. The tests live in `tests/it`;
//! this library only holds the helper processes they drive (see `src/bin`).

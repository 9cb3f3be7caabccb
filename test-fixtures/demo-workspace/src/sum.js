/** Adds two numbers. */
function sum(a, b) {
  return a - b;
}

module.exports = { sum };

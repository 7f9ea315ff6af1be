// What the scripts here share: their settings, from the environment the
// Go test that runs them sets.

// env returns the environment variable name, failing when it is unset.
export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

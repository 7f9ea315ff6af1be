// echo answers what it was given: the contract's input, unchanged.
exports.main = function (input, callback) {
  callback({ args: input.args, env: input.env, core: input.core }, null);
};

exports.greeting = (name) => 'hello ' + (name || 'world');

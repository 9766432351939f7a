import { errorText } from '../../libs/job-queue/src/worker/error-text';

const firstLine = (thrown: unknown) => errorText(thrown).split('\n')[0];

// `last_error`'s first line is what a dead letter's `error` and the job log's `failed` row carry:
// `Name: message`, never a stack frame.
describe('errorText', () => {
  it('keeps a stack as V8 writes it, which starts with the name and message', () => {
    const error = new TypeError('bad input');
    expect(errorText(error)).toBe(error.stack);
    expect(firstLine(error)).toBe('TypeError: bad input');
  });

  it('starts with the first line of a message of several lines', () => {
    const error = new Error('card declined\nsecond line');
    expect(errorText(error)).toBe(error.stack);
    expect(firstLine(error)).toBe('Error: card declined');
  });

  it('names a subclass by its own name', () => {
    class PaymentError extends Error {
      override name = 'PaymentError';
    }
    expect(firstLine(new PaymentError('declined'))).toBe('PaymentError: declined');
  });

  it('puts the header before a stack replaced by hand, even with an empty message', () => {
    const error = new Error('');
    error.stack = '    at charge (/srv/app/dist/charge.js:10:5)';
    expect(errorText(error)).toBe('Error\n    at charge (/srv/app/dist/charge.js:10:5)');
  });

  it('puts the header before a stack formatted before the message changed', () => {
    const error = new Error('n');
    void error.stack; // formatted now, with the message 'n'
    error.message = 'while charging: n';
    const text = errorText(error);
    expect(text.split('\n')[0]).toBe('Error: while charging: n');
    expect(text).toContain(`\n${error.stack}`);
  });

  it('is the header alone for an Error without a stack', () => {
    const error = new RangeError('too far');
    error.stack = undefined;
    expect(errorText(error)).toBe('RangeError: too far');
  });

  it('keeps a thrown string, and renders anything else on its first line', () => {
    expect(errorText('plain\ntext')).toBe('plain\ntext');
    expect(firstLine({ code: 42 })).toBe('Non-error thrown: { code: 42 }');
  });
});

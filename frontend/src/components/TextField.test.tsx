import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { TextField } from './TextField';

describe('TextField', () => {
  it('labels the input and describes it by its help', () => {
    render(<TextField id="f-name" label="Name" error={null} help="Your name" value="" onChange={() => {}} />);
    const input = screen.getByLabelText('Name');
    expect(input).toHaveAttribute('id', 'f-name');
    expect(input).not.toHaveAttribute('aria-invalid');
    expect(input).toHaveAccessibleDescription('Your name');
    expect(input.closest('.field')).not.toHaveClass('field-invalid');
  });

  it('marks the field invalid and describes the input by help and error', () => {
    render(<TextField id="f-name" label="Name" error="Enter a name" help="Your name" type="password" value="" onChange={() => {}} />);
    const input = screen.getByLabelText('Name');
    expect(input).toHaveAttribute('aria-invalid', 'true');
    expect(input).toHaveAttribute('type', 'password');
    expect(input).toHaveAttribute('aria-describedby', 'f-name-help f-name-error');
    expect(input).toHaveAccessibleDescription('Your name Enter a name');
    expect(input.closest('.field')).toHaveClass('field-invalid');
  });

  it('takes another id for its error', () => {
    render(<TextField id="f-value" errorId="f-error" label="Value" error="Too big" value="" onChange={() => {}} />);
    expect(screen.getByLabelText('Value')).toHaveAttribute('aria-describedby', 'f-error');
    expect(screen.getByText('Too big')).toHaveAttribute('id', 'f-error');
  });
});
